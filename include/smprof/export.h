// SMPROF_API marks what libsmprof exports. The library is compiled with
// -fvisibility=hidden and linked with a version script
// (cmake/libsmprof.map), so a declaration without it is private: the host
// process cannot see or interpose it, and calls inside the library are direct.
#pragma once

#if defined(__GNUC__)
#define SMPROF_API __attribute__((visibility("default")))
#else
#define SMPROF_API
#endif
