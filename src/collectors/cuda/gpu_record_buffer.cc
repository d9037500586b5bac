#include "collectors/cuda/gpu_record_buffer.h"

#include <utility>

namespace smprof::internal {

bool GpuRecordBuffer::Add(GpuBatch&& batch) {
  const std::size_t metadata = batch.devices.size() + batch.contexts.size();
  const std::size_t records = batch.size() - metadata;
  std::lock_guard<std::mutex> lock(mutex_);
  if (records_ + records > max_records_) {
    dropped_ += records;
    if (metadata == 0) return false;
    GpuBatch kept;
    kept.devices = std::move(batch.devices);
    kept.contexts = std::move(batch.contexts);
    batches_.push_back(std::move(kept));
    return false;
  }
  records_ += records;
  batches_.push_back(std::move(batch));
  return true;
}

void GpuRecordBuffer::CountDropped(std::uint64_t records) {
  std::lock_guard<std::mutex> lock(mutex_);
  dropped_ += records;
}

std::uint64_t GpuRecordBuffer::Take(std::vector<GpuBatch>* out) {
  std::vector<GpuBatch> taken;
  std::uint64_t dropped = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    taken.swap(batches_);
    records_ = 0;
    std::swap(dropped, dropped_);
  }
  for (GpuBatch& batch : taken) out->push_back(std::move(batch));
  return dropped;
}

std::size_t GpuRecordBuffer::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return records_;
}

}  // namespace smprof::internal
