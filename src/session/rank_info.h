// RankInfo: who this process is in a distributed job, read from the
// launcher's environment variables.
#pragma once

#include <string>

#include "runtime/resolved_config.h"

namespace smprof::internal {

struct RankInfo {
  int rank = 0;
  int local_rank = 0;
  int world_size = 1;
  std::string host;
  std::string job = "local";
  std::string source = "default";  // "torchrun", "mpi", "pmi", "slurm", "sagemaker" or "default"
};

// Launchers, in the order they are tried: torchrun (RANK, LOCAL_RANK,
// WORLD_SIZE), Open MPI (OMPI_COMM_WORLD_RANK/_LOCAL_RANK/_SIZE), PMI
// (PMI_RANK, PMI_SIZE), SLURM (SLURM_PROCID, SLURM_LOCALID, SLURM_NTASKS),
// SageMaker (SM_CURRENT_HOST's index in SM_HOSTS, one rank per host).
// Host: SM_CURRENT_HOST, else gethostname(). Job: SMP_JOB_NAME,
// TORCHELASTIC_RUN_ID, SLURM_JOB_ID, TRAINING_JOB_NAME, else "local".
RankInfo DetectRankInfo(const EnvLookup& env);

}  // namespace smprof::internal
