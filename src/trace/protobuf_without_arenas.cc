// The protobuf Arena entry points that protobuf-lite's code references (six
// functions and the per-thread arena cache), defined here instead of linking
// Debian's arena.o: that one object of
// libprotobuf-lite.a is compiled for executables (local-exec TLS relocations,
// R_X86_64_TPOFF32), which the linker cannot put into a shared library.
// smprof never constructs a protobuf Arena: every message is heap-allocated
// (arena == nullptr), and protobuf reaches these functions only through an
// Arena. Reaching one would mean that changed, so each stops the process with
// a message instead of corrupting memory. docs/ARCHITECTURE.md "Linking".
#include <google/protobuf/arena.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace {

[[noreturn]] void NoArenas(const char* function) {
  std::fprintf(stderr, "smprof: protobuf %s called, but smprof is built without protobuf arenas\n", function);
  std::abort();
}

}  // namespace

namespace google::protobuf {

void* Arena::AllocateAlignedWithHook(size_t, const std::type_info*) { NoArenas("Arena::AllocateAlignedWithHook"); }

void* Arena::AllocateAlignedWithHookForArray(size_t, const std::type_info*) {
  NoArenas("Arena::AllocateAlignedWithHookForArray");
}

std::pair<void*, internal::SerialArena::CleanupNode*> Arena::AllocateAlignedWithCleanup(size_t, const std::type_info*) {
  NoArenas("Arena::AllocateAlignedWithCleanup");
}

namespace internal {

// Read by RepeatedField only when it returns memory to an arena.
__thread ThreadSafeArena::ThreadCache ThreadSafeArena::thread_cache_ = {0, static_cast<std::uint64_t>(-1), nullptr};

ThreadSafeArena::~ThreadSafeArena() { NoArenas("ThreadSafeArena::~ThreadSafeArena"); }

void ThreadSafeArena::AddCleanup(void*, void (*)(void*)) { NoArenas("ThreadSafeArena::AddCleanup"); }

uint64_t ThreadSafeArena::SpaceAllocated() const { NoArenas("ThreadSafeArena::SpaceAllocated"); }

}  // namespace internal
}  // namespace google::protobuf
