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

int smprof_is_profiling(void) { return smprof::IsProfiling() ? 1 : 0; }

uint32_t smprof_intern_name(const char* name) { return smprof::InternName(name != nullptr ? name : ""); }

uint64_t smprof_annotation_begin(const char* name) {
  return smprof::AnnotationBegin(std::string_view(name != nullptr ? name : ""));
}

uint64_t smprof_annotation_begin_id(uint32_t name_id) { return smprof::AnnotationBegin(name_id); }

int smprof_annotation_end(uint64_t handle) { return static_cast<int>(smprof::AnnotationEnd(handle)); }

}  // extern "C"
