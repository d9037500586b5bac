#include "session/rank_info.h"

#include <unistd.h>

#include <climits>
#include <cstdlib>

namespace smprof::internal {

namespace {

bool ReadInt(const EnvLookup& env, const char* name, int* out) {
  const auto value = env(name);
  if (!value || value->empty()) return false;
  char* end = nullptr;
  const long n = std::strtol(value->c_str(), &end, 10);
  if (*end != '\0' || n < 0 || n > INT_MAX) return false;
  *out = static_cast<int>(n);
  return true;
}

struct Launcher {
  const char* source;
  const char* rank;
  const char* local_rank;
  const char* world_size;
};

constexpr Launcher kLaunchers[] = {
    {"torchrun", "RANK", "LOCAL_RANK", "WORLD_SIZE"},
    {"mpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE"},
    {"pmi", "PMI_RANK", "MPI_LOCALRANKID", "PMI_SIZE"},
    {"slurm", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS"},
};

// SM_HOSTS is a JSON list of host names, e.g. ["algo-1","algo-2"].
bool SageMakerRank(const std::string& hosts, const std::string& current, int* rank, int* world) {
  int index = 0;
  int found = -1;
  std::size_t pos = 0;
  while ((pos = hosts.find('"', pos)) != std::string::npos) {
    const std::size_t close = hosts.find('"', pos + 1);
    if (close == std::string::npos) break;
    if (hosts.compare(pos + 1, close - pos - 1, current) == 0) found = index;
    ++index;
    pos = close + 1;
  }
  if (found < 0) return false;
  *rank = found;
  *world = index;
  return true;
}

}  // namespace

RankInfo DetectRankInfo(const EnvLookup& env) {
  RankInfo info;
  bool have_rank = false;
  for (const Launcher& launcher : kLaunchers) {
    if (!ReadInt(env, launcher.rank, &info.rank)) continue;
    ReadInt(env, launcher.local_rank, &info.local_rank);
    ReadInt(env, launcher.world_size, &info.world_size);
    info.source = launcher.source;
    have_rank = true;
    break;
  }
  const auto sm_host = env("SM_CURRENT_HOST");
  if (!have_rank && sm_host) {
    if (const auto hosts = env("SM_HOSTS"); hosts && SageMakerRank(*hosts, *sm_host, &info.rank, &info.world_size)) {
      info.source = "sagemaker";
    }
  }
  if (info.world_size <= info.rank) info.world_size = info.rank + 1;

  if (sm_host && !sm_host->empty()) {
    info.host = *sm_host;
  } else {
    char name[HOST_NAME_MAX + 1] = {};
    info.host = gethostname(name, sizeof(name) - 1) == 0 ? name : "unknown-host";
  }
  for (const char* name : {"SMP_JOB_NAME", "TORCHELASTIC_RUN_ID", "SLURM_JOB_ID", "TRAINING_JOB_NAME"}) {
    if (const auto job = env(name); job && !job->empty() && *job != "none") {
      info.job = *job;
      break;
    }
  }
  return info;
}

}  // namespace smprof::internal
