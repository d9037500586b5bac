// NameTable: process-wide interning of annotation names to small ids.
//
// Ids are stable for the life of the process, across sessions. The drain
// thread turns them back into strings when it writes a frame. The table is
// bounded: past kMaxNames distinct names, new names map to kOverflowName.
#pragma once

#include <cstddef>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "smprof/annotate.h"

namespace smprof::internal {

class NameTable {
 public:
  static constexpr std::size_t kMaxNames = 1 << 20;
  static constexpr NameId kOverflowName = 0;

  static NameTable& Get();  // never destroyed

  NameId Intern(std::string_view name);
  std::string Lookup(NameId id) const;
  std::size_t size() const;

  std::mutex& mutex() { return mutex_; }  // for fork safety

 private:
  NameTable();
  mutable std::mutex mutex_;
  std::deque<std::string> names_;  // deque: views into it stay valid
  std::unordered_map<std::string_view, NameId> ids_;
};

}  // namespace smprof::internal
