// CUPTI activity buffers built by hand from the CUDA 13.0 header structs, as
// libcupti fills them on a GPU (records back to back, 8-byte aligned), and
// the real libcupti record iterator where it can be loaded (it works without
// a driver). Used by activity_decoder_test and gpu_records_benchmark.
#pragma once

#include <cupti_activity.h>
#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>
#include <dlfcn.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "collectors/cuda/activity_decoder.h"

namespace smprof::testing {

// The layout this code was written against (cupti_activity.h, CUDA 13.0).
static_assert(sizeof(CUpti_ActivityKernel10) == 216);
static_assert(sizeof(CUpti_ActivityMemcpy6) == 96);
static_assert(sizeof(CUpti_ActivityMemcpyPtoP4) == 96);
static_assert(sizeof(CUpti_ActivityMemset4) == 88);
static_assert(sizeof(CUpti_ActivityAPI) == 40);
static_assert(sizeof(CUpti_ActivitySynchronization2) == 56);
static_assert(sizeof(CUpti_ActivityExternalCorrelation) == 24);
static_assert(sizeof(CUpti_ActivityOverhead3) == 56);
static_assert(sizeof(CUpti_ActivityMarker2) == 56);
static_assert(sizeof(CUpti_ActivityDevice5) == 184);
static_assert(sizeof(CUpti_ActivityCudaEvent2) == 56);
static_assert(offsetof(CUpti_ActivityKernel10, start) == 16);
static_assert(offsetof(CUpti_ActivityKernel10, end) == 24);
static_assert(offsetof(CUpti_ActivityKernel10, deviceId) == 40);
static_assert(offsetof(CUpti_ActivityKernel10, correlationId) == 92);
static_assert(offsetof(CUpti_ActivityKernel10, name) == 104);
static_assert(offsetof(CUpti_ActivityKernel10, graphNodeId) == 144);
static_assert(offsetof(CUpti_ActivityKernel10, graphId) == 156);
static_assert(offsetof(CUpti_ActivityMemcpy6, bytes) == 8);
static_assert(offsetof(CUpti_ActivityMemcpy6, start) == 16);
static_assert(offsetof(CUpti_ActivityMemcpy6, correlationId) == 44);
static_assert(offsetof(CUpti_ActivityMemcpyPtoP4, srcDeviceId) == 44);
static_assert(offsetof(CUpti_ActivityMemcpyPtoP4, dstDeviceId) == 52);
static_assert(offsetof(CUpti_ActivityMemset4, start) == 16);
static_assert(offsetof(CUpti_ActivityAPI, start) == 8);
static_assert(offsetof(CUpti_ActivityAPI, threadId) == 28);
static_assert(offsetof(CUpti_ActivityAPI, correlationId) == 32);
static_assert(offsetof(CUpti_ActivitySynchronization2, start) == 8);
static_assert(offsetof(CUpti_ActivitySynchronization2, contextId) == 28);
static_assert(offsetof(CUpti_ActivityExternalCorrelation, externalId) == 8);
static_assert(offsetof(CUpti_ActivityExternalCorrelation, correlationId) == 16);
static_assert(offsetof(CUpti_ActivityOverhead3, start) == 24);
static_assert(offsetof(CUpti_ActivityMarker2, timestamp) == 8);
static_assert(offsetof(CUpti_ActivityMarker2, id) == 16);
static_assert(offsetof(CUpti_ActivityMarker2, name) == 40);
static_assert(offsetof(CUpti_ActivityMarker2, domain) == 48);
static_assert(offsetof(CUpti_ActivityDevice5, id) == 112);
static_assert(offsetof(CUpti_ActivityDevice5, uuid) == 120);
static_assert(offsetof(CUpti_ActivityDevice5, name) == 136);

// Records appended back to back, as CUPTI lays them out in a buffer.
class ActivityBuffer {
 public:
  template <typename Record>
  ActivityBuffer& Add(const Record& record) {
    static_assert(sizeof(Record) % 8 == 0);
    words_.resize(words_.size() + sizeof(Record) / 8);
    std::memcpy(data() + size_, &record, sizeof(Record));
    size_ += sizeof(Record);
    return *this;
  }
  std::uint8_t* data() { return reinterpret_cast<std::uint8_t*>(words_.data()); }
  std::size_t size() const { return size_; }

 private:
  std::vector<std::uint64_t> words_;  // 8-byte aligned, as CUPTI requires
  std::size_t size_ = 0;
};

inline CUpti_ActivityKernel10 Kernel(const char* name, std::uint64_t start, std::uint64_t end, std::uint32_t device,
                                     std::uint32_t stream, std::uint32_t correlation) {
  CUpti_ActivityKernel10 k{};
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.name = name;
  k.start = start;
  k.end = end;
  k.deviceId = device;
  k.contextId = device + 1;
  k.streamId = stream;
  k.correlationId = correlation;
  k.gridX = 128;
  k.gridY = 2;
  k.gridZ = 1;
  k.blockX = 256;
  k.blockY = 1;
  k.blockZ = 1;
  k.staticSharedMemory = 1024;
  k.dynamicSharedMemory = 4096;
  k.registersPerThread = 32;
  return k;
}

inline CUpti_ActivityMemcpy6 Memcpy(CUpti_ActivityMemcpyKind copy_kind, std::uint64_t bytes, std::uint64_t start,
                                    std::uint64_t end, std::uint32_t correlation) {
  CUpti_ActivityMemcpy6 m{};
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.copyKind = static_cast<std::uint8_t>(copy_kind);
  m.bytes = bytes;
  m.start = start;
  m.end = end;
  m.deviceId = 0;
  m.contextId = 1;
  m.streamId = 7;
  m.correlationId = correlation;
  return m;
}

inline CUpti_ActivityAPI Api(CUpti_ActivityKind kind, std::uint32_t cbid, std::uint64_t start, std::uint64_t end,
                             std::uint32_t tid, std::uint32_t correlation) {
  CUpti_ActivityAPI a{};
  a.kind = kind;
  a.cbid = cbid;
  a.start = start;
  a.end = end;
  a.processId = 1;
  a.threadId = tid;
  a.correlationId = correlation;
  return a;
}

inline CUpti_ActivityMarker2 Marker(CUpti_ActivityFlag flags, std::uint32_t id, std::uint64_t timestamp,
                                    std::uint32_t tid, const char* name, const char* domain) {
  CUpti_ActivityMarker2 m{};
  m.kind = CUPTI_ACTIVITY_KIND_MARKER;
  m.flags = flags;
  m.timestamp = timestamp;
  m.id = id;
  m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  m.objectId.pt.processId = 1;
  m.objectId.pt.threadId = tid;
  m.name = name;
  m.domain = domain;
  return m;
}

// libcupti's cuptiActivityGetNextRecord, or nullptr where libcupti cannot be
// loaded. The library stays loaded for the process.
inline internal::NextRecordFn LibcuptiNextRecord() {
  static const internal::NextRecordFn next = [] {
    for (const char* path : {"/usr/local/cuda-13.0/lib64/libcupti.so.13", "libcupti.so.13"}) {
      if (void* library = dlopen(path, RTLD_NOW | RTLD_LOCAL)) {
        return reinterpret_cast<internal::NextRecordFn>(dlsym(library, "cuptiActivityGetNextRecord"));
      }
    }
    return internal::NextRecordFn{nullptr};
  }();
  return next;
}

}  // namespace smprof::testing
