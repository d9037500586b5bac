// The C API (smprof_c.h) over the C++ one.
#include <string>

#include "smprof/smprof.h"
#include "smprof/smprof_c.h"

namespace {

thread_local std::string t_last_error;

int Report(const smprof::Status& status) {
  t_last_error = status.message();
  return static_cast<int>(status.code());
}

}  // namespace

extern "C" {

const char* smprof_last_error(void) { return t_last_error.c_str(); }

const char* smprof_version(void) { return smprof::Version(); }

int smprof_start(const char* const* keys, const char* const* values, size_t count) {
  smprof::Config config;
  for (size_t i = 0; i < count; ++i) {
    if (keys[i] == nullptr || values[i] == nullptr) {
      return Report(smprof::Status(smprof::StatusCode::kInvalidArgument, "null config key or value"));
    }
    config.Set(keys[i], values[i]);
  }
  return Report(smprof::Start(config));
}

int smprof_stop(void) { return Report(smprof::Stop()); }

int smprof_record_clock_alignment(const char* phase, int32_t reference_rank, const char* reference_host,
                                  int64_t reference_clock_offset_ns, const smprof_clock_sample* samples,
                                  size_t sample_count, const char* problem) {
  if (samples == nullptr && sample_count != 0) {
    return Report(smprof::Status(smprof::StatusCode::kInvalidArgument, "null clock samples"));
  }
  smprof::ClockAlignment alignment;
  alignment.phase = phase != nullptr ? phase : "";
  alignment.reference_rank = reference_rank;
  alignment.reference_host = reference_host != nullptr ? reference_host : "";
  alignment.reference_clock_offset_ns = reference_clock_offset_ns;
  alignment.problem = problem != nullptr ? problem : "";
  for (size_t i = 0; i < sample_count; ++i) {
    alignment.samples.push_back(smprof::ClockSample{samples[i].local_send_ns, samples[i].reference_receive_ns,
                                                    samples[i].reference_send_ns, samples[i].local_receive_ns});
  }
  return Report(smprof::RecordClockAlignment(alignment));
}

int64_t smprof_clock_offset_ns(void) { return smprof::ClockOffsetNs(); }

int smprof_is_profiling(void) { return smprof::IsProfiling() ? 1 : 0; }

uint32_t smprof_intern_name(const char* name) { return smprof::InternName(name != nullptr ? name : ""); }

uint64_t smprof_annotation_begin(const char* name) {
  return smprof::AnnotationBegin(std::string_view(name != nullptr ? name : ""));
}

uint64_t smprof_annotation_begin_id(uint32_t name_id) { return smprof::AnnotationBegin(name_id); }

int smprof_annotation_end(uint64_t handle) { return static_cast<int>(smprof::AnnotationEnd(handle)); }

}  // extern "C"
