// Configuration: every key's default, SMP_* environment overrides, a Config
// value beating the environment, loud errors for unknown keys and bad values
// (naming the key and the valid choices), each key's value parsing, and the
// key -> environment variable name mapping.
#include "smprof/config.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "collectors/cpu/perf_counters.h"
#include "runtime/resolved_config.h"

namespace smprof::internal {
namespace {

EnvLookup FakeEnv(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

ResolvedConfig ResolveOk(const Config& config, std::map<std::string, std::string> env = {}) {
  ResolvedConfig resolved;
  const Status status = ResolveConfig(config, FakeEnv(std::move(env)), &resolved);
  EXPECT_TRUE(status.ok()) << status.message();
  return resolved;
}

std::string ResolveError(const Config& config, std::map<std::string, std::string> env = {}) {
  ResolvedConfig resolved;
  const Status status = ResolveConfig(config, FakeEnv(std::move(env)), &resolved);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.message();
  return status.message();
}

Config One(const std::string& key, const std::string& value) { return Config().Set(key, value); }

const std::map<std::string, std::string> kDefaults = {
    {"EnableCuda", "auto"},
    {"EnablePerf", "1"},
    {"PerfEvents", "default"},
    {"CpuSampleIntervalMs", "100"},
    {"CpuProfilingDurationS", "3600"},
    {"EnableForkFollow", "0"},
    {"BucketCount", "16"},
    {"BucketSizeMB", "4"},
    {"CudaBufferMB", "64"},
    {"CudaSyncAtStop", "1"},
    {"CudaSyncTimeoutMs", "5000"},
    {"CudaFlushPeriodMs", "1000"},
    {"Compression", "zstd"},
    {"RecordFile", "smprof-out/%j/%h/rank%r_pid%p_%t.smprof"},
    {"FlushIntervalMs", "1000"},
    {"RotateIntervalS", "600"},
    {"UploadUri", ""},
    {"UploadExitTimeoutS", "120"},
    {"StopOnSigterm", "1"},
    {"ScheduleSkipFirst", "0"},
    {"ScheduleWait", "0"},
    {"ScheduleWarmup", "0"},
    {"ScheduleActive", "0"},
    {"ScheduleRepeat", "0"},
    {"ProcessRole", "main"},
    {"TorchAutoSteps", "0"},
    {"TorchCollectives", "1"},
    {"TorchModuleDepth", "0"},
    {"ClockAlignTimeoutS", "10"},
};

TEST(Config, KeysAreTheDocumentedOnesInOrder) {
  const std::vector<std::string> expected = {
      "EnableCuda",        "EnablePerf",        "PerfEvents",         "CpuSampleIntervalMs", "CpuProfilingDurationS",
      "EnableForkFollow",  "BucketCount",       "BucketSizeMB",       "CudaBufferMB",        "CudaSyncAtStop",
      "CudaSyncTimeoutMs", "CudaFlushPeriodMs", "Compression",        "RecordFile",          "FlushIntervalMs",
      "RotateIntervalS",   "UploadUri",         "UploadExitTimeoutS", "StopOnSigterm",       "ScheduleSkipFirst",
      "ScheduleWait",      "ScheduleWarmup",    "ScheduleActive",     "ScheduleRepeat",      "ProcessRole",
      "TorchAutoSteps",    "TorchCollectives",  "TorchModuleDepth",   "ClockAlignTimeoutS"};
  EXPECT_EQ(ConfigKeys(), expected);
}

TEST(Config, EveryKeyHasItsDefault) {
  const ResolvedConfig c = ResolveOk(Config());
  EXPECT_EQ(c.effective, kDefaults);
  EXPECT_TRUE(c.explicit_keys.empty());
  EXPECT_EQ(c.enable_cuda, Tristate::kAuto);
  EXPECT_TRUE(c.enable_perf);
  EXPECT_FALSE(c.enable_fork_follow);
  EXPECT_TRUE(c.stop_on_sigterm);
  EXPECT_EQ(c.bucket_count, 16u);
  EXPECT_EQ(c.bucket_size_mb, 4u);
  EXPECT_EQ(c.compression_level, 3);
  EXPECT_EQ(c.record_file, "smprof-out/%j/%h/rank%r_pid%p_%t.smprof");
  EXPECT_EQ(c.flush_interval_ms, 1000u);
  EXPECT_EQ(c.cpu_sample_interval_ms, 100u);
  EXPECT_EQ(c.cpu_duration_s, 3600u);
  EXPECT_EQ(c.perf_events, DefaultPerfEvents());
}

TEST(Config, UnderSageMakerTheDefaultRecordFileIsTheProfilerOutputDir) {
  const ResolvedConfig c = ResolveOk(Config(), {{"SM_CURRENT_HOST", "algo-1"}});
  EXPECT_EQ(c.record_file, "/opt/ml/output/profiler/framework/%h/rank%r_pid%p_%t.smprof");
  const ResolvedConfig mine = ResolveOk(One("RecordFile", "/tmp/x.smprof"), {{"SM_CURRENT_HOST", "algo-1"}});
  EXPECT_EQ(mine.record_file, "/tmp/x.smprof");
}

TEST(Config, EnvironmentOverridesEveryDefault) {
  const ResolvedConfig c = ResolveOk(Config(), {{"SMP_ENABLE_CUDA", "1"},
                                                {"SMP_ENABLE_PERF", "0"},
                                                {"SMP_ENABLE_FORK_FOLLOW", "yes"},
                                                {"SMP_BUCKET_COUNT", "8"},
                                                {"SMP_BUCKET_SIZE_MB", "2"},
                                                {"SMP_COMPRESSION", "none"},
                                                {"SMP_RECORD_FILE", "/tmp/env_%p.smprof"},
                                                {"SMP_FLUSH_INTERVAL_MS", "250"},
                                                {"SMP_PERF_EVENTS", "task-clock, page-faults"},
                                                {"SMP_CPU_SAMPLE_INTERVAL_MS", "20"},
                                                {"SMP_CPU_PROFILING_DURATION_S", "0"},
                                                {"SMP_ROTATE_INTERVAL_S", "30"},
                                                {"SMP_UPLOAD_URI", "s3://bucket/env"},
                                                {"SMP_UPLOAD_EXIT_TIMEOUT_S", "5"},
                                                {"SMP_CUDA_BUFFER_MB", "16"},
                                                {"SMP_CUDA_SYNC_AT_STOP", "0"},
                                                {"SMP_CUDA_SYNC_TIMEOUT_MS", "750"},
                                                {"SMP_CUDA_FLUSH_PERIOD_MS", "0"},
                                                {"SMP_STOP_ON_SIGTERM", "0"},
                                                {"SMP_SCHEDULE_SKIP_FIRST", "1"},
                                                {"SMP_SCHEDULE_WAIT", "2"},
                                                {"SMP_SCHEDULE_WARMUP", "1"},
                                                {"SMP_SCHEDULE_ACTIVE", "3"},
                                                {"SMP_SCHEDULE_REPEAT", "4"},
                                                {"SMP_PROCESS_ROLE", "worker"},
                                                {"SMP_TORCH_AUTO_STEPS", "1"},
                                                {"SMP_TORCH_COLLECTIVES", "0"},
                                                {"SMP_TORCH_MODULE_DEPTH", "2"},
                                                {"SMP_CLOCK_ALIGN_TIMEOUT_S", "3"}});
  EXPECT_EQ(c.enable_cuda, Tristate::kOn);
  EXPECT_FALSE(c.enable_perf);
  EXPECT_TRUE(c.enable_fork_follow);
  EXPECT_EQ(c.bucket_count, 8u);
  EXPECT_EQ(c.bucket_size_mb, 2u);
  EXPECT_EQ(c.compression_level, 0);
  EXPECT_EQ(c.record_file, "/tmp/env_%p.smprof");
  EXPECT_EQ(c.flush_interval_ms, 250u);
  EXPECT_EQ(c.perf_events, (std::vector<std::string>{"task-clock", "page-faults"}));
  EXPECT_EQ(c.cpu_sample_interval_ms, 20u);
  EXPECT_EQ(c.cpu_duration_s, 0u);
  EXPECT_EQ(c.rotate_interval_s, 30u);
  EXPECT_EQ(c.upload_uri, "s3://bucket/env");
  EXPECT_EQ(c.upload_exit_timeout_s, 5u);
  EXPECT_EQ(c.cuda_buffer_mb, 16u);
  EXPECT_FALSE(c.cuda_sync_at_stop);
  EXPECT_EQ(c.cuda_sync_timeout_ms, 750u);
  EXPECT_EQ(c.cuda_flush_period_ms, 0u);
  EXPECT_FALSE(c.stop_on_sigterm);
  EXPECT_TRUE(c.worker_process);
  EXPECT_EQ(c.effective.at("ScheduleActive"), "3");
  EXPECT_EQ(c.effective.at("ClockAlignTimeoutS"), "3");
  EXPECT_EQ(c.effective.at("TorchCollectives"), "0");
  EXPECT_EQ(c.explicit_keys.size(), kDefaults.size());
  EXPECT_EQ(c.effective.at("BucketCount"), "8");
}

TEST(Config, ConfigValueBeatsEnvironment) {
  const ResolvedConfig c = ResolveOk(Config().Set("BucketCount", "3").Set("EnableCuda", "0"),
                                     {{"SMP_BUCKET_COUNT", "8"}, {"SMP_ENABLE_CUDA", "1"}, {"SMP_ENABLE_PERF", "0"}});
  EXPECT_EQ(c.bucket_count, 3u);
  EXPECT_EQ(c.enable_cuda, Tristate::kOff);
  EXPECT_FALSE(c.enable_perf) << "keys not in the Config still come from the environment";
  EXPECT_EQ(c.explicit_keys.at("BucketCount"), "3");
  EXPECT_EQ(c.effective.at("EnableCuda"), "0");
}

TEST(Config, ConfigValueBeatsABadEnvironmentValue) {
  const ResolvedConfig c = ResolveOk(One("BucketCount", "2"), {{"SMP_BUCKET_COUNT", "lots"}});
  EXPECT_EQ(c.bucket_count, 2u);
}

TEST(Config, UnknownKeyNamesTheKeyAndListsTheValidOnes) {
  const std::string message = ResolveError(One("BucketCnt", "4"));
  EXPECT_NE(message.find("'BucketCnt'"), std::string::npos) << message;
  for (const auto& [key, value] : kDefaults) EXPECT_NE(message.find(key), std::string::npos) << key;
  EXPECT_NE(ResolveError(One("enablecuda", "1")).find("'enablecuda'"), std::string::npos) << "keys are case sensitive";
}

TEST(Config, BadValueNamesTheKeyTheValueAndTheValidValues) {
  const std::string message = ResolveError(One("EnableCuda", "maybe"));
  EXPECT_NE(message.find("'EnableCuda'"), std::string::npos) << message;
  EXPECT_NE(message.find("'maybe'"), std::string::npos) << message;
  EXPECT_NE(message.find("auto, 1 or 0"), std::string::npos) << message;

  const std::string count = ResolveError(One("BucketCount", "0"));
  EXPECT_NE(count.find("'BucketCount'"), std::string::npos) << count;
  EXPECT_NE(count.find("from 1 to 4096"), std::string::npos) << count;
}

TEST(Config, BadEnvironmentValueNamesTheVariable) {
  const std::string message = ResolveError(Config(), {{"SMP_FLUSH_INTERVAL_MS", "fast"}});
  EXPECT_NE(message.find("'FlushIntervalMs'"), std::string::npos) << message;
  EXPECT_NE(message.find("SMP_FLUSH_INTERVAL_MS"), std::string::npos) << message;
  EXPECT_NE(message.find("from 10 to 60000"), std::string::npos) << message;
}

TEST(Config, BooleansAcceptTheCommonSpellings) {
  for (const char* yes : {"1", "true", "TRUE", "yes", "on", "On"}) {
    EXPECT_TRUE(ResolveOk(One("EnablePerf", yes)).enable_perf) << yes;
    EXPECT_TRUE(ResolveOk(One("EnableForkFollow", yes)).enable_fork_follow) << yes;
    EXPECT_EQ(ResolveOk(One("EnableCuda", yes)).enable_cuda, Tristate::kOn) << yes;
  }
  for (const char* no : {"0", "false", "No", "off"}) {
    EXPECT_FALSE(ResolveOk(One("EnablePerf", no)).enable_perf) << no;
    EXPECT_EQ(ResolveOk(One("EnableCuda", no)).enable_cuda, Tristate::kOff) << no;
  }
  EXPECT_EQ(ResolveOk(One("EnableCuda", "AUTO")).enable_cuda, Tristate::kAuto);
  for (const char* bad : {"", "2", "y", "auto"}) ResolveError(One("EnablePerf", bad));
}

TEST(Config, IntegersMustBeWholeAndInRange) {
  EXPECT_EQ(ResolveOk(One("BucketCount", "1")).bucket_count, 1u);
  EXPECT_EQ(ResolveOk(One("BucketCount", "4096")).bucket_count, 4096u);
  EXPECT_EQ(ResolveOk(One("BucketSizeMB", "4096")).bucket_size_mb, 4096u);
  EXPECT_EQ(ResolveOk(One("FlushIntervalMs", "10")).flush_interval_ms, 10u);
  EXPECT_EQ(ResolveOk(One("FlushIntervalMs", "60000")).flush_interval_ms, 60000u);
  for (const char* bad : {"0", "4097", "-1", "", "12abc", "1.5", "99999999999999999999"}) {
    ResolveError(One("BucketCount", bad));
    ResolveError(One("BucketSizeMB", bad));
  }
  ResolveError(One("FlushIntervalMs", "9"));
  ResolveError(One("FlushIntervalMs", "60001"));
}

TEST(Config, CompressionIsZstdNoneOrALevel) {
  EXPECT_EQ(ResolveOk(One("Compression", "zstd")).compression_level, 3);
  EXPECT_EQ(ResolveOk(One("Compression", "ZSTD")).compression_level, 3);
  EXPECT_EQ(ResolveOk(One("Compression", "none")).compression_level, 0);
  EXPECT_EQ(ResolveOk(One("Compression", "0")).compression_level, 0);
  EXPECT_EQ(ResolveOk(One("Compression", "19")).compression_level, 19);
  const std::string message = ResolveError(One("Compression", "lz4"));
  EXPECT_NE(message.find("zstd, none, or a zstd level"), std::string::npos) << message;
  ResolveError(One("Compression", "20"));
}

TEST(Config, RecordFileAcceptsEveryCodeAndRejectsOthers) {
  EXPECT_EQ(ResolveOk(One("RecordFile", "/o/%p_%t_%r_%l_%h_%j_%s_%%.smprof")).record_file,
            "/o/%p_%t_%r_%l_%h_%j_%s_%%.smprof");
  EXPECT_EQ(ResolveOk(One("RecordFile", "plain.smprof")).record_file, "plain.smprof");
  const std::string message = ResolveError(One("RecordFile", "trace_%x.smprof"));
  EXPECT_NE(message.find("'RecordFile'"), std::string::npos) << message;
  EXPECT_NE(message.find("'trace_%x.smprof'"), std::string::npos) << message;
  EXPECT_NE(message.find("%p pid"), std::string::npos) << message;
  ResolveError(One("RecordFile", "ends_with_%"));
  ResolveError(One("RecordFile", ""));
  ResolveError(One("RecordFile", "%P"));
}

// Values each key must refuse: NUL-cut values ("100\0junk" is not 100),
// signs, spaces, other bases, and malformed paths and URIs.
struct InvalidValue {
  const char* key;
  std::string value;
  const char* valid;  // part of the key's valid values, as the error lists them
};

const std::vector<InvalidValue>& InvalidValues() {
  using namespace std::string_literals;
  static const std::vector<InvalidValue> values = {
      {"BucketCount", "100\0junk"s, "from 1 to 4096"},
      {"BucketCount", "+8", "from 1 to 4096"},
      {"BucketCount", " 8", "from 1 to 4096"},
      {"BucketCount", "8 ", "from 1 to 4096"},
      {"BucketCount", "0x10", "from 1 to 4096"},
      {"BucketSizeMB", "-0", "from 1 to 4096"},
      {"CudaBufferMB", "64\0"s, "from 8 to 4096"},
      {"FlushIntervalMs", "\t100", "from 10 to 60000"},
      {"CpuSampleIntervalMs", "1e2", "from 10 to 60000"},
      {"CpuProfilingDurationS", "-0", "from 0 (no CPU sampling)"},
      {"RotateIntervalS", "+0", "from 0 (one file per session)"},
      {"UploadExitTimeoutS", "000000000000000120", "from 0 to 86400"},
      {"EnablePerf", "1\0"s, "1 or 0"},
      {"EnableForkFollow", "yes\n", "1 or 0"},
      {"EnableCuda", "auto\0"s, "auto, 1 or 0"},
      {"Compression", "3\0junk"s, "zstd, none, or a zstd level"},
      {"Compression", "+3", "zstd, none, or a zstd level"},
      {"PerfEvents", "cycles\0instructions"s, "comma-separated list of perf event names"},
      {"RecordFile", "/tmp/a\0/etc/b.smprof"s, "%p pid"},
      {"RecordFile", "out/\n.smprof", "%p pid"},
      {"RecordFile", "out/traces/", "not ending in '/'"},
      {"UploadUri", "s3://bucket\0/x"s, "s3://bucket/prefix"},
      {"UploadUri", "s3://Bucket/x", "3-63 lowercase letters"},
      {"UploadUri", "s3://b", "3-63 lowercase letters"},
      {"UploadUri", "s3://bu cket", "3-63 lowercase letters"},
      {"UploadUri", "s3://-bucket-/x", "3-63 lowercase letters"},
  };
  return values;
}

TEST(Config, EveryKeyRefusesStrictlyInvalidValuesAndSaysWhichKeyAndWhatIsValid) {
  for (const InvalidValue& bad : InvalidValues()) {
    const std::string what = std::string(bad.key) + "=" + bad.value;
    const std::string message = ResolveError(One(bad.key, bad.value));
    EXPECT_NE(message.find("'" + std::string(bad.key) + "'"), std::string::npos) << what << ": " << message;
    EXPECT_NE(message.find(bad.valid), std::string::npos) << what << ": " << message;
    EXPECT_EQ(message.find('\0'), std::string::npos) << what << ": the message escapes control characters";
    const std::string from_env = ResolveError(Config(), {{EnvNameFor(bad.key), bad.value}});
    EXPECT_NE(from_env.find(EnvNameFor(bad.key)), std::string::npos) << what << ": " << from_env;
  }
}

TEST(Config, ControlCharactersInAValueAreShownEscaped) {
  using namespace std::string_literals;
  const std::string message = ResolveError(One("BucketCount", "100\0junk"s));
  EXPECT_NE(message.find("'100\\x00junk'"), std::string::npos) << message;
  EXPECT_NE(message.find("control character"), std::string::npos) << message;
}

TEST(Config, StrictParsingStillAcceptsPlainValues) {
  EXPECT_EQ(ResolveOk(One("BucketCount", "08")).bucket_count, 8u);
  EXPECT_EQ(ResolveOk(One("RecordFile", "out/trace_%p.smprof")).record_file, "out/trace_%p.smprof");
  EXPECT_EQ(ResolveOk(One("UploadUri", "s3://my-bucket.v2")).upload_uri, "s3://my-bucket.v2");
  EXPECT_EQ(ResolveOk(One("UploadUri", "s3://my-bucket/a/b/")).upload_uri, "s3://my-bucket/a/b/");
}

TEST(Config, EnvNameForMapsCamelCaseToUpperSnakeCase) {
  EXPECT_EQ(EnvNameFor("EnableCuda"), "SMP_ENABLE_CUDA");
  EXPECT_EQ(EnvNameFor("EnablePerf"), "SMP_ENABLE_PERF");
  EXPECT_EQ(EnvNameFor("EnableForkFollow"), "SMP_ENABLE_FORK_FOLLOW");
  EXPECT_EQ(EnvNameFor("BucketCount"), "SMP_BUCKET_COUNT");
  EXPECT_EQ(EnvNameFor("BucketSizeMB"), "SMP_BUCKET_SIZE_MB");
  EXPECT_EQ(EnvNameFor("Compression"), "SMP_COMPRESSION");
  EXPECT_EQ(EnvNameFor("RecordFile"), "SMP_RECORD_FILE");
  EXPECT_EQ(EnvNameFor("FlushIntervalMs"), "SMP_FLUSH_INTERVAL_MS");
}

TEST(Config, ValidateConfigChecksWithoutStarting) {
  EXPECT_TRUE(ValidateConfig(Config().Set("BucketCount", "2").Set("RecordFile", "/tmp/v_%p.smprof")).ok());
  const Status bad = ValidateConfig(One("NoSuchKey", "1"));
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("NoSuchKey"), std::string::npos);
}

TEST(Config, RotationAndUploadKeys) {
  EXPECT_EQ(ResolveOk(One("RotateIntervalS", "0")).rotate_interval_s, 0u);
  EXPECT_EQ(ResolveOk(One("RotateIntervalS", "31536000")).rotate_interval_s, 31536000u);
  ResolveError(One("RotateIntervalS", "-1"));
  ResolveError(One("RotateIntervalS", "1.5"));
  EXPECT_EQ(ResolveOk(One("UploadUri", "s3://bucket/prefix/x")).upload_uri, "s3://bucket/prefix/x");
  EXPECT_EQ(ResolveOk(One("UploadUri", "")).upload_uri, "");
  for (const char* bad : {"bucket/prefix", "s3://", "s3:///prefix", "https://bucket"}) {
    const std::string message = ResolveError(One("UploadUri", bad));
    EXPECT_NE(message.find("s3://bucket/prefix"), std::string::npos) << message;
  }
  EXPECT_EQ(EnvNameFor("RotateIntervalS"), "SMP_ROTATE_INTERVAL_S");
  EXPECT_EQ(EnvNameFor("StopOnSigterm"), "SMP_STOP_ON_SIGTERM");
  EXPECT_EQ(EnvNameFor("UploadUri"), "SMP_UPLOAD_URI");
}

TEST(Config, ProcessRoleMarksAWorker) {
  EXPECT_FALSE(ResolveOk(Config()).worker_process);
  EXPECT_TRUE(ResolveOk(One("ProcessRole", "worker")).worker_process);
  EXPECT_FALSE(ResolveOk(One("ProcessRole", "main")).worker_process);
  const std::string error = ResolveError(One("ProcessRole", "boss"));
  EXPECT_NE(error.find("'ProcessRole'"), std::string::npos) << error;
  EXPECT_NE(error.find("main (a rank's own process) or worker"), std::string::npos) << error;
}

}  // namespace
}  // namespace smprof::internal
