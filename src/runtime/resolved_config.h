// ResolvedConfig: the validated, typed form of a Config after defaults and
// SMP_* environment variables are applied. Built by ResolveConfig.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "smprof/config.h"
#include "smprof/status.h"

namespace smprof::internal {

enum class Tristate { kAuto, kOff, kOn };

struct ResolvedConfig {
  Tristate enable_cuda = Tristate::kAuto;
  bool enable_perf = true;
  bool enable_fork_follow = false;
  bool stop_on_sigterm = true;  // stop the session (footer) on SIGTERM
  std::uint32_t bucket_count = 16;
  std::uint32_t bucket_size_mb = 4;
  // CUPTI activity buffers (and, again, decoded GPU records) held at most.
  std::uint32_t cuda_buffer_mb = 64;
  bool cuda_sync_at_stop = true;              // stop waits for queued GPU work
  std::uint32_t cuda_sync_timeout_ms = 5000;  // ... at most this long
  std::uint32_t cuda_flush_period_ms = 1000;  // cuptiActivityFlushPeriod; 0: CUPTI's default
  int compression_level = 3;                  // zstd level; 0 stores frames uncompressed
  std::string record_file;                    // pattern, see ExpandRecordFile
  std::uint32_t flush_interval_ms = 1000;
  std::uint32_t cpu_sample_interval_ms = 100;
  std::uint32_t cpu_duration_s = 3600;  // 0: no CPU sampling
  std::vector<std::string> perf_events;
  std::uint32_t rotate_interval_s = 600;      // 0: one file per session
  std::string upload_uri;                     // recorded only; smppy uploads (docs/S3.md)
  std::uint32_t upload_exit_timeout_s = 120;  // recorded only; smppy waits this long at exit
  bool worker_process = false;                // ProcessRole=worker: a rank's worker, no machine-wide counters

  // Every key with its effective value, as written into the trace header.
  std::map<std::string, std::string> effective;
  // Keys the user set (in the Config or the environment), not defaulted.
  std::map<std::string, std::string> explicit_keys;
};

// Reads an environment variable; std::nullopt when unset.
using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;
EnvLookup ProcessEnv();

// The environment variable for a key: EnableCuda -> SMP_ENABLE_CUDA.
std::string EnvNameFor(const std::string& key);

// Defaults < environment < config. On error the message names the key (and
// the variable, if the value came from one) and lists the valid values.
Status ResolveConfig(const Config& config, const EnvLookup& env, ResolvedConfig* out);

}  // namespace smprof::internal
