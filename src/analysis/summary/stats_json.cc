#include "analysis/summary/stats_json.h"

namespace smprof::analysis {

void WriteStats(const LogHistogram& h, JsonWriter& out) {
  out.BeginObject();
  out.Field("count", h.count());
  out.Field("total_ns", h.total());
  out.Field("mean_ns", h.mean());
  out.Field("min_ns", h.min());
  out.Field("max_ns", h.max());
  out.Field("p50_ns", h.Quantile(0.50));
  out.Field("p90_ns", h.Quantile(0.90));
  out.Field("p99_ns", h.Quantile(0.99));
  out.Key("histogram").BeginArray();
  for (const auto& bucket : h.NonEmptyBuckets()) {
    out.BeginArray().Int(bucket.lo).Int(bucket.hi).Uint(bucket.count).EndArray();
  }
  out.EndArray();
  out.EndObject();
}

}  // namespace smprof::analysis
