// RankInfo: rank, local rank and world size from each launcher's variables
// (torchrun, Open MPI, PMI, SLURM, SageMaker's SM_HOSTS/SM_CURRENT_HOST), the
// order launchers are tried in, the single-process default, host and job.
#include "session/rank_info.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <climits>
#include <map>
#include <optional>

namespace smprof::internal {
namespace {

RankInfo Detect(std::map<std::string, std::string> vars) {
  return DetectRankInfo([vars = std::move(vars)](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  });
}

std::string HostName() {
  char name[HOST_NAME_MAX + 1] = {};
  gethostname(name, sizeof(name) - 1);
  return name;
}

TEST(RankInfo, DefaultIsASingleLocalProcess) {
  const RankInfo info = Detect({});
  EXPECT_EQ(info.rank, 0);
  EXPECT_EQ(info.local_rank, 0);
  EXPECT_EQ(info.world_size, 1);
  EXPECT_EQ(info.source, "default");
  EXPECT_EQ(info.job, "local");
  EXPECT_EQ(info.host, HostName());
  EXPECT_FALSE(info.host.empty());
}

TEST(RankInfo, Torchrun) {
  const RankInfo info = Detect({{"RANK", "5"}, {"LOCAL_RANK", "1"}, {"WORLD_SIZE", "8"}});
  EXPECT_EQ(info.rank, 5);
  EXPECT_EQ(info.local_rank, 1);
  EXPECT_EQ(info.world_size, 8);
  EXPECT_EQ(info.source, "torchrun");
}

TEST(RankInfo, OpenMpi) {
  const RankInfo info =
      Detect({{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "4"}});
  EXPECT_EQ(info.rank, 3);
  EXPECT_EQ(info.local_rank, 3);
  EXPECT_EQ(info.world_size, 4);
  EXPECT_EQ(info.source, "mpi");
}

TEST(RankInfo, Pmi) {
  const RankInfo info = Detect({{"PMI_RANK", "7"}, {"MPI_LOCALRANKID", "2"}, {"PMI_SIZE", "16"}});
  EXPECT_EQ(info.rank, 7);
  EXPECT_EQ(info.local_rank, 2);
  EXPECT_EQ(info.world_size, 16);
  EXPECT_EQ(info.source, "pmi");
}

TEST(RankInfo, Slurm) {
  const RankInfo info = Detect({{"SLURM_PROCID", "9"}, {"SLURM_LOCALID", "1"}, {"SLURM_NTASKS", "12"}});
  EXPECT_EQ(info.rank, 9);
  EXPECT_EQ(info.local_rank, 1);
  EXPECT_EQ(info.world_size, 12);
  EXPECT_EQ(info.source, "slurm");
}

TEST(RankInfo, SageMakerRankIsTheHostsIndexInSmHosts) {
  const RankInfo info = Detect({{"SM_HOSTS", R"(["algo-1","algo-2","algo-3"])"}, {"SM_CURRENT_HOST", "algo-2"}});
  EXPECT_EQ(info.rank, 1);
  EXPECT_EQ(info.world_size, 3);
  EXPECT_EQ(info.source, "sagemaker");
  EXPECT_EQ(info.host, "algo-2");

  const RankInfo spaced = Detect({{"SM_HOSTS", R"([ "algo-1", "algo-2" ])"}, {"SM_CURRENT_HOST", "algo-1"}});
  EXPECT_EQ(spaced.rank, 0);
  EXPECT_EQ(spaced.world_size, 2);
}

TEST(RankInfo, SageMakerHostNotInTheListFallsBackToDefaultRank) {
  const RankInfo info = Detect({{"SM_HOSTS", R"(["algo-1"])"}, {"SM_CURRENT_HOST", "algo-9"}});
  EXPECT_EQ(info.rank, 0);
  EXPECT_EQ(info.world_size, 1);
  EXPECT_EQ(info.source, "default");
  EXPECT_EQ(info.host, "algo-9") << "the host name still comes from SM_CURRENT_HOST";
}

TEST(RankInfo, SageMakerHostNamePrefixIsNotAMatch) {
  const RankInfo info = Detect({{"SM_HOSTS", R"(["algo-10","algo-1"])"}, {"SM_CURRENT_HOST", "algo-1"}});
  EXPECT_EQ(info.rank, 1);
}

TEST(RankInfo, LauncherVariablesBeatSageMakerAndTorchrunComesFirst) {
  const RankInfo info = Detect({{"RANK", "2"},
                                {"OMPI_COMM_WORLD_RANK", "6"},
                                {"SLURM_PROCID", "4"},
                                {"SM_HOSTS", R"(["algo-1","algo-2"])"},
                                {"SM_CURRENT_HOST", "algo-2"}});
  EXPECT_EQ(info.rank, 2);
  EXPECT_EQ(info.source, "torchrun");
  EXPECT_EQ(info.host, "algo-2");
}

TEST(RankInfo, UnparsableRankIsSkippedForTheNextLauncher) {
  const RankInfo info = Detect({{"RANK", "zero"}, {"SLURM_PROCID", "3"}, {"SLURM_NTASKS", "4"}});
  EXPECT_EQ(info.rank, 3);
  EXPECT_EQ(info.source, "slurm");
  EXPECT_EQ(Detect({{"RANK", "-1"}}).source, "default");
  EXPECT_EQ(Detect({{"RANK", ""}}).source, "default");
}

TEST(RankInfo, WorldSizeIsAtLeastRankPlusOne) {
  const RankInfo missing = Detect({{"RANK", "5"}});
  EXPECT_EQ(missing.world_size, 6);
  const RankInfo too_small = Detect({{"RANK", "5"}, {"WORLD_SIZE", "2"}});
  EXPECT_EQ(too_small.world_size, 6);
}

TEST(RankInfo, JobComesFromTheFirstVariableSet) {
  EXPECT_EQ(Detect({{"SMP_JOB_NAME", "mine"}, {"TORCHELASTIC_RUN_ID", "te"}}).job, "mine");
  EXPECT_EQ(Detect({{"TORCHELASTIC_RUN_ID", "te-42"}, {"SLURM_JOB_ID", "77"}}).job, "te-42");
  EXPECT_EQ(Detect({{"TORCHELASTIC_RUN_ID", "none"}, {"SLURM_JOB_ID", "77"}}).job, "77")
      << "torchrun's placeholder run id 'none' is not a job";
  EXPECT_EQ(Detect({{"SLURM_JOB_ID", ""}, {"TRAINING_JOB_NAME", "sm-job"}}).job, "sm-job");
  EXPECT_EQ(Detect({{"TRAINING_JOB_NAME", "sm-job"}}).job, "sm-job");
  EXPECT_EQ(Detect({}).job, "local");
}

}  // namespace
}  // namespace smprof::internal
