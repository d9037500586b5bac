// NameTable: process-wide interning of annotation (and kernel) names to small ids.
//
// Ids are stable for the life of the process, across sessions. The drain
// thread turns them back into strings when it writes a frame. The table is
// bounded, and every name it does not keep whole is counted (the footer's
// annotation_names_cut and annotation_names_refused, docs/TRACE_FORMAT.md):
// a name longer than kMaxNameBytes is cut there, at a UTF-8 boundary, and
// ends with " [cut: N bytes]"; past kMaxNames distinct names or kMaxTableBytes
// of them, new names map to kOverflowName.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
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
  static constexpr std::size_t kMaxNameBytes = 16 << 10;  // a CUTLASS kernel's name fits
  static constexpr std::size_t kMaxTableBytes = 256 << 20;
  static constexpr NameId kOverflowName = 0;

  static NameTable& Get();  // never destroyed

  NameId Intern(std::string_view name);
  std::string Lookup(NameId id) const;
  std::size_t size() const;

  // Names cut at kMaxNameBytes (each distinct one once), and names given
  // kOverflowName (each time), since the last call.
  std::uint64_t TakeCut() { return cut_.exchange(0, std::memory_order_relaxed); }
  std::uint64_t TakeRefused() { return refused_.exchange(0, std::memory_order_relaxed); }

  std::mutex& mutex() { return mutex_; }  // for fork safety

 private:
  NameTable();
  mutable std::mutex mutex_;
  std::deque<std::string> names_;  // deque: views into it stay valid
  std::unordered_map<std::string_view, NameId> ids_;
  std::size_t bytes_ = 0;
  std::atomic<std::uint64_t> cut_{0};
  std::atomic<std::uint64_t> refused_{0};
};

// `name` cut to at most NameTable::kMaxNameBytes: its longest prefix that
// ends on a UTF-8 boundary and leaves room for " [cut: N bytes]" (N: the
// bytes left out). `name` itself when it fits.
std::string CutName(std::string_view name);

}  // namespace smprof::internal
