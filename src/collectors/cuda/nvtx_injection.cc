#include "collectors/cuda/nvtx_injection.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace smprof::internal {

namespace {

constexpr char kVariable[] = "NVTX_INJECTION64_PATH";

bool g_decided = false;  // serialized by the callers
// What we set, nullptr if not ours; plain atomics so the fork child handler
// never waits on a lock or a static's initialisation guard.
std::atomic<const char*> g_ours{nullptr};
std::atomic<int> g_writes{0};

}  // namespace

void InjectNvtxOncePerProcess(const std::string& cupti_path) {
  if (g_decided) return;
  g_decided = true;
  if (cupti_path.empty() || std::getenv(kVariable) != nullptr) return;
  g_ours.store(cupti_path.c_str(), std::memory_order_relaxed);
  g_writes.fetch_add(1, std::memory_order_relaxed);
  setenv(kVariable, cupti_path.c_str(), 0);
}

void WithdrawNvtxInForkedChild() {
  const char* ours = g_ours.exchange(nullptr, std::memory_order_relaxed);
  if (ours == nullptr) return;
  const char* value = std::getenv(kVariable);
  if (value != nullptr && std::strcmp(value, ours) == 0) {
    g_writes.fetch_add(1, std::memory_order_relaxed);
    unsetenv(kVariable);
  }
}

int NvtxEnvironmentWrites() { return g_writes.load(std::memory_order_relaxed); }

}  // namespace smprof::internal
