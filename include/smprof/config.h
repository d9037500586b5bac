// smprof::Config: the profiler's settings as string key/value pairs.
//
// The keys are those of SageMaker Profiler scripts (EnableCuda, BucketCount,
// RecordFile, ...) plus smprof's own; docs/CONFIG.md documents each one with
// its valid values and default. Values are strings, as in the Python API's
// `Config().profiler` dict. Every key can also be set from the environment as
// SMP_<KEY_IN_UPPER_SNAKE_CASE> (EnableCuda -> SMP_ENABLE_CUDA); a value given
// in the Config wins over the environment, which wins over the default.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "smprof/export.h"
#include "smprof/status.h"

namespace smprof {

struct Config {
  std::map<std::string, std::string> values;

  Config& Set(const std::string& key, const std::string& value) {
    values[key] = value;
    return *this;
  }
};

// The documented keys, in the order docs/CONFIG.md lists them.
SMPROF_API std::vector<std::string> ConfigKeys();

// Checks every key and value of `config` (and of SMP_* environment variables)
// without starting anything. The message of a failure names the key and the
// valid values.
SMPROF_API Status ValidateConfig(const Config& config);

}  // namespace smprof
