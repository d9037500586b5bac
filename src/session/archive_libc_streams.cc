// stderr and stdout for the code of the static archives inside libsmprof and
// _smppy. Debian's libprotobuf-lite.a, libzstd.a and libpfm.a are compiled as
// PIE: they read glibc's `stderr`/`stdout` variables with direct PC-relative
// loads, which a shared library cannot resolve against libc. The build
// renames those references in its copies of the archives
// (cmake/SmprofPrivateDeps.cmake) to these hidden pointers, set at load time
// to glibc's own stream objects. docs/ARCHITECTURE.md "Linking".
#include <cstdio>

extern "C" {

// glibc's standard stream objects (exported since GLIBC_2.2.5); `stderr` and
// `stdout` point to them.
extern FILE _IO_2_1_stderr_;
extern FILE _IO_2_1_stdout_;

__attribute__((visibility("hidden"))) FILE* smprof_archive_stderr = &_IO_2_1_stderr_;
__attribute__((visibility("hidden"))) FILE* smprof_archive_stdout = &_IO_2_1_stdout_;

}  // extern "C"
