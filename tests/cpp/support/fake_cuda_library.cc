// A stand-in for a CUDA library file (libcudart.so.N, libcupti.so.N): the
// CUPTI search tests copy it under those names into pip- and toolkit-shaped
// directories and check which file the search opens.
extern "C" {
int smprof_fake_cuda_library = 1;
}
