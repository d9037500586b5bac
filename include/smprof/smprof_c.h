/* The C API of libsmprof, for bindings from other languages.
 *
 * Mirrors smprof.h: every function returns 0 on success or a positive
 * smprof_status code; smprof_last_error() gives the message of the last
 * failure on the calling thread.
 *
 *   const char* keys[] = {"RecordFile"};
 *   const char* values[] = {"out/rank%r.smprof"};
 *   if (smprof_start(keys, values, 1) != 0) fprintf(stderr, "%s\n", smprof_last_error());
 *   uint64_t h = smprof_annotation_begin("step");
 *   smprof_annotation_end(h);
 *   smprof_stop();
 */
#ifndef SMPROF_SMPROF_C_H_
#define SMPROF_SMPROF_C_H_

#include <stddef.h>
#include <stdint.h>

#include "smprof/export.h"

#ifdef __cplusplus
extern "C" {
#endif

enum smprof_status {
  SMPROF_OK = 0,
  SMPROF_INVALID_ARGUMENT = 1,
  SMPROF_FAILED_PRECONDITION = 2,
  SMPROF_IO_ERROR = 3,
  SMPROF_INTERNAL = 4,
};

/* The message of the calling thread's last failed call ("" if none). */
SMPROF_API const char* smprof_last_error(void);
SMPROF_API const char* smprof_version(void);

/* Starts a session with `count` key/value configuration pairs. */
SMPROF_API int smprof_start(const char* const* keys, const char* const* values, size_t count);
SMPROF_API int smprof_stop(void);
SMPROF_API int smprof_is_profiling(void);

/* Clock alignment with the job's reference process (smprof/clock_alignment.h):
 * one round trip, each time on its process's CLOCK_MONOTONIC. */
typedef struct smprof_clock_sample {
  int64_t local_send_ns;
  int64_t reference_receive_ns;
  int64_t reference_send_ns;
  int64_t local_receive_ns;
} smprof_clock_sample;
/* Adds one round to the running session; `problem` "" when it succeeded. */
SMPROF_API int smprof_record_clock_alignment(const char* phase, int32_t reference_rank, const char* reference_host,
                                             int64_t reference_clock_offset_ns, const smprof_clock_sample* samples,
                                             size_t sample_count, const char* problem);
/* CLOCK_REALTIME - CLOCK_MONOTONIC as the trace's anchors read it. */
SMPROF_API int64_t smprof_clock_offset_ns(void);

/* Interns a name once; use the id with smprof_annotation_begin_id. */
SMPROF_API uint32_t smprof_intern_name(const char* name);
/* Opens a range; returns 0 (a no-op handle) when not profiling. */
SMPROF_API uint64_t smprof_annotation_begin(const char* name);
SMPROF_API uint64_t smprof_annotation_begin_id(uint32_t name_id);
/* Closes a range; returns an smprof::EndResult value (0 when recorded in order). */
SMPROF_API int smprof_annotation_end(uint64_t handle);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SMPROF_SMPROF_C_H_ */
