// A toy training loop profiled with libsmprof.
//
// Each step is an SMPROF_ANNOTATE scope with nested "forward"/"backward"
// scopes; a loader thread prepares batches and opens a handle range per batch
// that the main thread ends when it consumes the batch (handles may end on
// another thread). At the end the program prints where the trace went.
//
//   ./app                           # writes smprof-out/example_pid<pid>_<time>.smprof
//   ./app /tmp/traces/run_%p.smprof # any RecordFile pattern (see docs/CONFIG.md)
#include <smprof/smprof.h>

#include <condition_variable>
#include <cstdio>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace {

constexpr int kSteps = 20;
constexpr int kSize = 48;

struct Batch {
  std::vector<float> data;
  smprof::AnnotationHandle in_flight;  // opened by the loader, ended by the trainer
};

// A bounded queue between the loader thread and the training loop.
class BatchQueue {
 public:
  void Push(Batch batch) {
    std::unique_lock<std::mutex> lock(mutex_);
    not_full_.wait(lock, [this] { return batches_.size() < 2; });
    batches_.push_back(std::move(batch));
    not_empty_.notify_one();
  }
  Batch Pop() {
    std::unique_lock<std::mutex> lock(mutex_);
    not_empty_.wait(lock, [this] { return !batches_.empty(); });
    Batch batch = std::move(batches_.front());
    batches_.pop_front();
    not_full_.notify_one();
    return batch;
  }

 private:
  std::mutex mutex_;
  std::condition_variable not_full_;
  std::condition_variable not_empty_;
  std::deque<Batch> batches_;
};

void Loader(BatchQueue* queue) {
  for (int step = 0; step < kSteps; ++step) {
    Batch batch;
    batch.in_flight = smprof::AnnotationBegin("batch_in_flight");
    {
      SMPROF_ANNOTATE("load_batch");
      batch.data.resize(kSize * kSize);
      for (int i = 0; i < kSize * kSize; ++i) batch.data[i] = static_cast<float>((i * 7 + step) % 13) / 13.0f;
    }
    queue->Push(std::move(batch));
  }
}

// c = a x b for square kSize matrices: the "compute" of the toy model.
void MatMul(const std::vector<float>& a, const std::vector<float>& b, std::vector<float>* c) {
  SMPROF_ANNOTATE("matmul");
  for (int i = 0; i < kSize; ++i) {
    for (int j = 0; j < kSize; ++j) {
      float sum = 0;
      for (int k = 0; k < kSize; ++k) sum += a[i * kSize + k] * b[k * kSize + j];
      (*c)[i * kSize + j] = sum;
    }
  }
}

float Train() {
  BatchQueue queue;
  std::thread loader(Loader, &queue);
  std::vector<float> weights(kSize * kSize, 0.01f);
  std::vector<float> activations(kSize * kSize);
  std::vector<float> gradients(kSize * kSize);
  for (int step = 0; step < kSteps; ++step) {
    SMPROF_ANNOTATE("step");
    Batch batch = queue.Pop();
    smprof::AnnotationEnd(batch.in_flight);
    {
      SMPROF_ANNOTATE("forward");
      MatMul(batch.data, weights, &activations);
    }
    {
      SMPROF_ANNOTATE("backward");
      MatMul(activations, batch.data, &gradients);
    }
    {
      SMPROF_ANNOTATE("optimizer");
      for (int i = 0; i < kSize * kSize; ++i) weights[i] -= 1e-3f * gradients[i];
    }
  }
  loader.join();
  return weights[0];
}

}  // namespace

int main(int argc, char** argv) {
  smprof::Config config;
  config.Set("RecordFile", argc > 1 ? argv[1] : "smprof-out/example_pid%p_%t.smprof");
  if (smprof::Status status = smprof::Start(config); !status.ok()) {
    std::fprintf(stderr, "cannot start profiling: %s\n", status.message().c_str());
    return 1;
  }
  const float result = Train();
  if (smprof::Status status = smprof::Stop(); !status.ok()) {
    std::fprintf(stderr, "cannot stop profiling: %s\n", status.message().c_str());
    return 1;
  }
  const smprof::SessionStats stats = smprof::LastSessionStats();
  std::printf("trained %d steps (w[0]=%g) with smprof %s\n", kSteps, result, smprof::Version());
  std::printf("%llu annotations written, %llu dropped, %llu frames, %llu bytes\n",
              static_cast<unsigned long long>(stats.annotations_written),
              static_cast<unsigned long long>(stats.annotations_dropped),
              static_cast<unsigned long long>(stats.frames_written),
              static_cast<unsigned long long>(stats.bytes_written));
  std::printf("trace: %s\n", stats.path.c_str());
  return 0;
}
