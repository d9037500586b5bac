// CollectiveChains: each instance's first and last arriving rank process
// (ties by process id), the roles a slice takes in its chain, no chain for an
// instance one process alone called, and the bytes a parallel export's
// workers get back the same (damaged bytes refused).
#include "analysis/timeline/collective_chains.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace smprof::analysis {
namespace {

CollectiveChains ThreeRanks() {
  CollectiveChains chains;
  chains.Add(7, 2, 300);  // instance 7: process 1 first, 3 between, 2 last
  chains.Add(7, 1, 100);
  chains.Add(7, 3, 200);
  chains.Add(8, 1, 500);  // instance 8: processes 1 and 2 at once, then 3
  chains.Add(8, 2, 500);
  chains.Add(8, 3, 900);
  chains.Add(9, 1, 50);  // instance 9: one process only
  return chains;
}

TEST(CollectiveChains, TheFirstArriverBeginsTheLastEndsTheOthersStep) {
  const CollectiveChains chains = ThreeRanks();
  EXPECT_EQ(chains.RoleOf(7, 1), ChainRole::kBegin);
  EXPECT_EQ(chains.RoleOf(7, 3), ChainRole::kStep);
  EXPECT_EQ(chains.RoleOf(7, 2), ChainRole::kEnd);
  EXPECT_EQ(chains.RoleOf(8, 1), ChainRole::kBegin);  // a tie: the lower process first
  EXPECT_EQ(chains.RoleOf(8, 2), ChainRole::kStep);
  EXPECT_EQ(chains.RoleOf(8, 3), ChainRole::kEnd);
  EXPECT_EQ(chains.RoleOf(9, 1), ChainRole::kNone);
  EXPECT_EQ(chains.RoleOf(10, 1), ChainRole::kNone);  // not an instance of the export
}

TEST(CollectiveChains, TheBytesGiveTheSameChainsBack) {
  const CollectiveChains chains = ThreeRanks();
  const std::string bytes = chains.Serialize();
  const CollectiveChains parsed = CollectiveChains::Parse(bytes);
  EXPECT_EQ(parsed.size(), chains.size());
  for (const std::uint64_t id : {7, 8, 9, 10}) {
    for (const std::uint32_t process : {1, 2, 3}) EXPECT_EQ(parsed.RoleOf(id, process), chains.RoleOf(id, process));
  }
  EXPECT_THROW(CollectiveChains::Parse(bytes.substr(1)), std::invalid_argument);
  EXPECT_EQ(CollectiveChains::Parse("").size(), 0u);
}

}  // namespace
}  // namespace smprof::analysis
