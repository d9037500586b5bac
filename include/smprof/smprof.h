// smprof: an in-process profiler for deep-learning training.
//
//   smprof::Config config;
//   config.Set("RecordFile", "traces/rank%r_%p.smprof");
//   if (smprof::Status s = smprof::Start(config); !s.ok()) { ... }
//   {
//     SMPROF_ANNOTATE("forward");   // an RAII scope, see annotate.h
//     ...
//   }
//   smprof::Stop();                 // flushes and closes the trace file
//
// Start/Stop may be repeated; each session writes a new file. Everything is
// process-wide and thread-safe. Errors are returned as Status, never thrown.
#pragma once

#include <cstdint>
#include <string>

#include "smprof/annotate.h"
#include "smprof/clock_alignment.h"
#include "smprof/config.h"
#include "smprof/export.h"
#include "smprof/status.h"

namespace smprof {

// The library's version, "MAJOR.MINOR.PATCH".
SMPROF_API const char* Version();

// Starts a profiling session with `config` (see config.h). Fails with
// kInvalidArgument on a bad configuration, kFailedPrecondition if a session
// is already running, kIoError if the trace file cannot be created.
SMPROF_API Status Start(const Config& config);

// Stops the running session: flushes every buffered event, writes the footer
// and closes the file. Fails with kFailedPrecondition if nothing is running.
SMPROF_API Status Stop();

// Stop without waiting for the GPU work still queued (CudaSyncAtStop's wait):
// from an exit path, or while the stopping thread's stream captures a CUDA
// graph, where a device-wide wait would break the capture. `why` goes into
// the trace (footer gpu_collection.synchronize_skipped).
SMPROF_API Status StopWithoutGpuWait(const std::string& why);

// True between a successful Start and the matching Stop.
SMPROF_API bool IsProfiling();

// What the last (or current) session wrote. Zero before any session.
struct SessionStats {
  std::string path;  // the trace file
  std::uint64_t annotations_written = 0;
  std::uint64_t annotations_dropped = 0;  // pool exhausted (see BucketCount) or not writable (disk full)
  std::uint64_t frames_written = 0;
  std::uint64_t bytes_written = 0;
};
SMPROF_API SessionStats LastSessionStats();

}  // namespace smprof
