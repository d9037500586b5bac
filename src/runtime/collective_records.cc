#include "runtime/collective_records.h"

#include <utility>

#include "smprof/annotate.h"

namespace smprof::internal {

BoundedBuffer<CollectiveRecord>& CollectiveRecords() {
  static auto* records = new BoundedBuffer<CollectiveRecord>(kMaxBufferedCollectives);  // leaked: see the header
  return *records;
}

bool RecordCollective(CollectiveRecord record) {
  if (!g_recording.load(std::memory_order_relaxed)) return false;
  CollectiveRecords().Add(std::move(record));
  return true;
}

}  // namespace smprof::internal
