/* Profiling from C with only smprof_c.h.
 *
 *   ./c_app /tmp/c_example.smprof
 *
 * Starts a session writing to the given file, records a few nested ranges,
 * stops, and shows what a configuration error looks like.
 */
#include <smprof/smprof_c.h>
#include <stdio.h>

static double Work(int n) {
  double sum = 0;
  for (int i = 1; i <= n; ++i) sum += 1.0 / i;
  return sum;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s TRACE_FILE\n", argv[0]);
    return 2;
  }
  const char* bad_keys[] = {"BucketCnt"};
  const char* bad_values[] = {"4"};
  if (smprof_start(bad_keys, bad_values, 1) == SMPROF_INVALID_ARGUMENT) {
    printf("a typo is caught: %s\n", smprof_last_error());
  }

  const char* keys[] = {"RecordFile", "BucketCount"};
  const char* values[] = {argv[1], "2"};
  if (smprof_start(keys, values, 2) != SMPROF_OK) {
    fprintf(stderr, "cannot start profiling: %s\n", smprof_last_error());
    return 1;
  }
  const uint32_t step_name = smprof_intern_name("c_step"); /* intern once, use often */
  double total = 0;
  for (int step = 0; step < 10; ++step) {
    const uint64_t step_range = smprof_annotation_begin_id(step_name);
    const uint64_t work_range = smprof_annotation_begin("c_work");
    total += Work(10000);
    smprof_annotation_end(work_range);
    smprof_annotation_end(step_range);
  }
  if (smprof_stop() != SMPROF_OK) {
    fprintf(stderr, "cannot stop profiling: %s\n", smprof_last_error());
    return 1;
  }
  printf("total %.3f with smprof %s\n", total, smprof_version());
  printf("trace: %s\n", argv[1]);
  return 0;
}
