// Config keys: names, defaults, parsing and validation.
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "collectors/cpu/perf_counters.h"
#include "runtime/resolved_config.h"

namespace smprof {

namespace internal {

namespace {

struct KeySpec {
  const char* key;
  const char* default_value;
  const char* valid;  // shown to the user in errors
  // Parses `value` into `config`; false when invalid. Null for PerfEvents,
  // whose errors carry their own suggestions.
  std::function<bool(const std::string& value, ResolvedConfig* config)> parse;
};

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::optional<bool> ParseBool(const std::string& value) {
  const std::string v = Lower(value);
  if (v == "1" || v == "true" || v == "yes" || v == "on") return true;
  if (v == "0" || v == "false" || v == "no" || v == "off") return false;
  return std::nullopt;
}

// Decimal digits only: no sign, space, base prefix or fraction.
std::optional<long> ParseInt(const std::string& value, long min, long max) {
  constexpr std::size_t kMaxDigits = 12;  // beyond every key's range, within long's
  if (value.empty() || value.size() > kMaxDigits) return std::nullopt;
  for (const char c : value) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  char* end = nullptr;
  errno = 0;
  const long n = std::strtol(value.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || n < min || n > max) return std::nullopt;
  return n;
}

bool ParseRecordFile(const std::string& value, ResolvedConfig* config) {
  if (value.empty() || value.back() == '/') return false;  // a file, not a directory
  for (std::size_t i = 0; i < value.size(); ++i) {
    if (value[i] != '%') continue;
    if (i + 1 == value.size()) return false;
    const char code = value[++i];
    if (std::string("ptrhljs%").find(code) == std::string::npos) return false;
  }
  config->record_file = value;
  return true;
}

// An S3 bucket name: 3-63 lowercase letters, digits, dots and hyphens,
// starting and ending with a letter or digit (as smppy.s3.S3Uri checks).
bool IsBucketName(const std::string& name) {
  auto edge = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (name.size() < 3 || name.size() > 63 || !edge(name.front()) || !edge(name.back())) return false;
  for (const char c : name) {
    if (!edge(c) && c != '.' && c != '-') return false;
  }
  return true;
}

// libsmprof only records UploadUri; the Python package uploads (docs/S3.md).
bool ParseUploadUri(const std::string& value, ResolvedConfig* config) {
  const std::string scheme = "s3://";
  if (!value.empty()) {
    if (value.compare(0, scheme.size(), scheme) != 0) return false;
    const std::string rest = value.substr(scheme.size());
    if (!IsBucketName(rest.substr(0, rest.find('/')))) return false;
  }
  config->upload_uri = value;
  return true;
}

// An integer key in [min, max] that libsmprof only validates and records;
// smppy acts on it (the schedule and the PyTorch hooks, docs/CONFIG.md).
auto RecordedIntKey(long min, long max) {
  return [min, max](const std::string& v, ResolvedConfig*) { return ParseInt(v, min, max).has_value(); };
}

// A 0/1 key that libsmprof only validates and records; smppy acts on it.
bool RecordedBoolKey(const std::string& v, ResolvedConfig*) { return ParseBool(v).has_value(); }

// A 0/1 key stored in `field`.
auto BoolKey(bool ResolvedConfig::*field) {
  return [field](const std::string& v, ResolvedConfig* c) {
    const auto b = ParseBool(v);
    if (b) c->*field = *b;
    return b.has_value();
  };
}

// An integer key in [min, max] stored in `field`.
auto IntKey(std::uint32_t ResolvedConfig::*field, long min, long max) {
  return [field, min, max](const std::string& v, ResolvedConfig* c) {
    const auto n = ParseInt(v, min, max);
    if (n) c->*field = static_cast<std::uint32_t>(*n);
    return n.has_value();
  };
}

const std::vector<KeySpec>& Specs() {
  static const std::vector<KeySpec> specs = {
      {"EnableCuda", "auto", "auto, 1 or 0 (also true/false, yes/no, on/off)",
       [](const std::string& v, ResolvedConfig* c) {
         if (Lower(v) == "auto") {
           c->enable_cuda = Tristate::kAuto;
           return true;
         }
         const auto b = ParseBool(v);
         if (b) c->enable_cuda = *b ? Tristate::kOn : Tristate::kOff;
         return b.has_value();
       }},
      {"EnablePerf", "1", "1 or 0 (also true/false, yes/no, on/off)", BoolKey(&ResolvedConfig::enable_perf)},
      {"PerfEvents", "default",
       "'default', or a comma-separated list of perf event names (cycles, instructions, cache-misses, "
       "task-clock, ..., or a vendor event such as cpu_clk_unhalted.ref_tsc)",
       nullptr},
      {"CpuSampleIntervalMs", "100", "an integer from 10 to 60000 (milliseconds)",
       IntKey(&ResolvedConfig::cpu_sample_interval_ms, 10, 60000)},
      {"CpuProfilingDurationS", "3600", "an integer from 0 (no CPU sampling) to 31536000 (seconds)",
       IntKey(&ResolvedConfig::cpu_duration_s, 0, 31536000)},
      {"EnableForkFollow", "0", "1 or 0 (also true/false, yes/no, on/off)",
       BoolKey(&ResolvedConfig::enable_fork_follow)},
      {"BucketCount", "16", "an integer from 1 to 4096", IntKey(&ResolvedConfig::bucket_count, 1, 4096)},
      {"BucketSizeMB", "4", "an integer from 1 to 4096 (MiB)", IntKey(&ResolvedConfig::bucket_size_mb, 1, 4096)},
      {"CudaBufferMB", "64", "an integer from 8 to 4096 (MiB)", IntKey(&ResolvedConfig::cuda_buffer_mb, 8, 4096)},
      {"CudaSyncAtStop", "1", "1 or 0 (also true/false, yes/no, on/off)", BoolKey(&ResolvedConfig::cuda_sync_at_stop)},
      {"CudaSyncTimeoutMs", "5000", "an integer from 1 to 600000 (milliseconds)",
       IntKey(&ResolvedConfig::cuda_sync_timeout_ms, 1, 600000)},
      {"CudaFlushPeriodMs", "1000", "an integer from 0 (CUPTI's own heuristics) to 60000 (milliseconds)",
       IntKey(&ResolvedConfig::cuda_flush_period_ms, 0, 60000)},
      {"Compression", "zstd", "zstd, none, or a zstd level from 0 (store) to 19",
       [](const std::string& v, ResolvedConfig* c) {
         const std::string lower = Lower(v);
         if (lower == "zstd") {
           c->compression_level = 3;
           return true;
         }
         if (lower == "none") {
           c->compression_level = 0;
           return true;
         }
         const auto n = ParseInt(v, 0, 19);
         if (n) c->compression_level = static_cast<int>(*n);
         return n.has_value();
       }},
      {"RecordFile", "smprof-out/%j/%h/rank%r_pid%p_%t.smprof",
       "a file path pattern; %p pid, %t start time, %r rank, %l local rank, %h host, %j job, "
       "%s session index, %% a percent sign (not ending in '/')",
       ParseRecordFile},
      {"FlushIntervalMs", "1000", "an integer from 10 to 60000 (milliseconds)",
       IntKey(&ResolvedConfig::flush_interval_ms, 10, 60000)},
      {"RotateIntervalS", "600", "an integer from 0 (one file per session) to 31536000 (seconds)",
       IntKey(&ResolvedConfig::rotate_interval_s, 0, 31536000)},
      {"UploadUri", "",
       "empty (no upload), or s3://bucket or s3://bucket/prefix (a bucket name: 3-63 lowercase letters, digits, "
       "dots and hyphens)",
       ParseUploadUri},
      {"UploadExitTimeoutS", "120", "an integer from 0 to 86400 (seconds)",
       IntKey(&ResolvedConfig::upload_exit_timeout_s, 0, 86400)},
      {"StopOnSigterm", "1", "1 or 0 (also true/false, yes/no, on/off)", BoolKey(&ResolvedConfig::stop_on_sigterm)},
      {"ScheduleSkipFirst", "0", "an integer from 0 to 1000000000 (steps)", RecordedIntKey(0, 1000000000)},
      {"ScheduleWait", "0", "an integer from 0 to 1000000000 (steps)", RecordedIntKey(0, 1000000000)},
      {"ScheduleWarmup", "0", "an integer from 0 to 1000000000 (steps)", RecordedIntKey(0, 1000000000)},
      {"ScheduleActive", "0", "an integer from 0 (no schedule: profile every step) to 1000000000 (steps)",
       RecordedIntKey(0, 1000000000)},
      {"ScheduleRepeat", "0", "an integer from 0 (repeat until the end) to 1000000000 (cycles)",
       RecordedIntKey(0, 1000000000)},
      {"ProcessRole", "main",
       "main (a rank's own process) or worker (a DataLoader or multiprocessing worker of the rank; no "
       "machine-wide counters)",
       [](const std::string& v, ResolvedConfig* c) {
         const std::string role = Lower(v);
         c->worker_process = role == "worker";
         return role == "main" || role == "worker";
       }},
      {"TorchAutoSteps", "0", "1 or 0 (also true/false, yes/no, on/off)", RecordedBoolKey},
      {"TorchCollectives", "1", "1 or 0 (also true/false, yes/no, on/off)", RecordedBoolKey},
      {"TorchModuleDepth", "0", "an integer from 0 (no module scopes) to 64", RecordedIntKey(0, 64)},
      {"ClockAlignTimeoutS", "10", "an integer from 0 (no clock alignment) to 3600 (seconds)", RecordedIntKey(0, 3600)},
  };
  return specs;
}

std::string KeyList() {
  std::string keys;
  for (const KeySpec& spec : Specs()) keys += (keys.empty() ? "" : ", ") + std::string(spec.key);
  return keys;
}

Status ParsePerfEvents(const std::string& value, const std::string& origin, ResolvedConfig* config) {
  if (Lower(value) == "default") {
    config->perf_events = DefaultPerfEvents();
    return Status::Ok();
  }
  Status status = ParsePerfEventList(value, &config->perf_events);
  if (!status.ok()) return Status(status.code(), status.message() + origin);
  if (config->perf_events.empty()) {
    return Status(StatusCode::kInvalidArgument, "PerfEvents" + origin + " lists no event; use 'default' or name some");
  }
  return Status::Ok();
}

// No key takes a NUL or another control character: a NUL would silently cut
// the value short where it reaches C strings (a path, strtol).
bool HasControlCharacter(const std::string& value) {
  for (const char c : value) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) return true;
  }
  return false;
}

// `value` quoted for an error message, control characters and bytes that are
// not ASCII escaped as \xNN, so that the message itself stays one clean line.
std::string Quoted(const std::string& value) {
  std::string out = "'";
  for (const char c : value) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f) {
      static const char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 0xf];
    } else {
      out += c;
    }
  }
  return out + "'";
}

// Under SageMaker the original product wrote to this directory.
constexpr const char* kSageMakerOutputDir = "/opt/ml/output/profiler/framework/";

}  // namespace

EnvLookup ProcessEnv() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

std::string EnvNameFor(const std::string& key) {
  std::string name = "SMP_";
  for (std::size_t i = 0; i < key.size(); ++i) {
    const auto c = static_cast<unsigned char>(key[i]);
    const bool boundary = i > 0 && std::isupper(c) &&
                          (std::islower(static_cast<unsigned char>(key[i - 1])) ||
                           (i + 1 < key.size() && std::islower(static_cast<unsigned char>(key[i + 1]))));
    if (boundary) name += '_';
    name += static_cast<char>(std::toupper(c));
  }
  return name;
}

Status ResolveConfig(const Config& config, const EnvLookup& env, ResolvedConfig* out) {
  for (const auto& [key, value] : config.values) {
    bool known = false;
    for (const KeySpec& spec : Specs()) known = known || key == spec.key;
    if (!known) {
      return Status(StatusCode::kInvalidArgument,
                    "unknown profiler config key " + Quoted(key) + "; valid keys: " + KeyList());
    }
  }
  ResolvedConfig resolved;
  for (const KeySpec& spec : Specs()) {
    std::string value = spec.default_value;
    std::string origin;
    if (spec.key == std::string("RecordFile") && env("SM_CURRENT_HOST")) {
      value = std::string(kSageMakerOutputDir) + "%h/rank%r_pid%p_%t.smprof";
    }
    const std::string env_name = EnvNameFor(spec.key);
    if (auto from_env = env(env_name)) {
      value = *from_env;
      origin = " (from environment variable " + env_name + ")";
      resolved.explicit_keys[spec.key] = value;
    }
    if (auto it = config.values.find(spec.key); it != config.values.end()) {
      value = it->second;
      origin.clear();
      resolved.explicit_keys[spec.key] = value;
    }
    const bool has_control = HasControlCharacter(value);
    if (spec.parse == nullptr && !has_control) {  // PerfEvents: its own message names unknown events
      if (Status st = ParsePerfEvents(value, origin, &resolved); !st.ok()) return st;
    } else if (has_control || !spec.parse(value, &resolved)) {
      return Status(StatusCode::kInvalidArgument,
                    "invalid value " + Quoted(value) + " for profiler config key '" + spec.key + "'" + origin +
                        (has_control ? " (it contains a control character)" : "") + "; valid values: " + spec.valid);
    }
    resolved.effective[spec.key] = value;
  }
  *out = std::move(resolved);
  return Status::Ok();
}

}  // namespace internal

std::vector<std::string> ConfigKeys() {
  std::vector<std::string> keys;
  for (const auto& spec : internal::Specs()) keys.emplace_back(spec.key);
  return keys;
}

Status ValidateConfig(const Config& config) {
  internal::ResolvedConfig resolved;
  return internal::ResolveConfig(config, internal::ProcessEnv(), &resolved);
}

}  // namespace smprof
