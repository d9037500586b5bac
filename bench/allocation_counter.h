// Counts every allocation of the process (a benchmark of one thread), by
// replacing the global operator new. Include in exactly one source file of a
// benchmark executable.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <new>

static std::uint64_t g_allocations = 0;

void* operator new(std::size_t size) {
  ++g_allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
