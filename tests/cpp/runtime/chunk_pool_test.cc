// ChunkPool: the bounded memory behind thread buffers. Pins down capacity,
// exhaustion (nullptr, never growth), recycling on Release, and that lowering
// the capacity frees chunks, at once when free and later when in use.
#include "runtime/chunk_pool.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

namespace smprof::internal {
namespace {

std::vector<Chunk*> AcquireAll(ChunkPool& pool, std::size_t at_most) {
  std::vector<Chunk*> chunks;
  for (std::size_t i = 0; i < at_most; ++i) {
    Chunk* chunk = pool.Acquire();
    if (chunk == nullptr) break;
    chunks.push_back(chunk);
  }
  return chunks;
}

TEST(ChunkLayout, ChunkIsExactly64KiBAndHoldsFixedSizeRecords) {
  EXPECT_EQ(sizeof(Chunk), 64u * 1024u);
  EXPECT_EQ(sizeof(AnnotationRecord), 32u);
  EXPECT_EQ(Chunk::kCapacity, (64u * 1024u - 64u) / 32u);
}

TEST(ChunkPool, NewPoolHasNoCapacityAndRefusesAcquire) {
  ChunkPool pool;
  EXPECT_EQ(pool.capacity(), 0u);
  EXPECT_EQ(pool.Acquire(), nullptr);
  EXPECT_FALSE(pool.MaybeAvailable());
  EXPECT_EQ(pool.allocated(), 0u);
}

TEST(ChunkPool, HandsOutExactlyCapacityDistinctChunks) {
  ChunkPool pool;
  pool.SetCapacity(5);
  EXPECT_EQ(pool.capacity(), 5u);
  EXPECT_TRUE(pool.MaybeAvailable());
  std::vector<Chunk*> chunks = AcquireAll(pool, 100);
  ASSERT_EQ(chunks.size(), 5u);
  EXPECT_EQ(std::set<Chunk*>(chunks.begin(), chunks.end()).size(), 5u);
  EXPECT_EQ(pool.in_use(), 5u);
  EXPECT_EQ(pool.allocated(), 5u);
  for (Chunk* chunk : chunks) pool.Release(chunk);
}

TEST(ChunkPool, ExhaustedPoolReturnsNullAndDoesNotGrow) {
  ChunkPool pool;
  pool.SetCapacity(3);
  std::vector<Chunk*> chunks = AcquireAll(pool, 3);
  ASSERT_EQ(chunks.size(), 3u);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(pool.Acquire(), nullptr);
  EXPECT_FALSE(pool.MaybeAvailable());
  EXPECT_EQ(pool.allocated(), 3u);
  EXPECT_EQ(pool.in_use(), 3u);
  for (Chunk* chunk : chunks) pool.Release(chunk);
}

TEST(ChunkPool, ReleaseMakesAChunkAvailableAgainAndClearsIt) {
  ChunkPool pool;
  pool.SetCapacity(2);
  std::vector<Chunk*> chunks = AcquireAll(pool, 2);
  ASSERT_EQ(chunks.size(), 2u);
  ASSERT_EQ(pool.Acquire(), nullptr);

  Chunk* used = chunks[1];
  used->committed.store(17);
  used->consumed = 12;
  used->sealed.store(true);
  pool.Release(used);
  EXPECT_TRUE(pool.MaybeAvailable());
  EXPECT_EQ(pool.in_use(), 1u);

  Chunk* again = pool.Acquire();
  ASSERT_EQ(again, used) << "a released chunk is recycled, not reallocated";
  EXPECT_EQ(again->committed.load(), 0u);
  EXPECT_EQ(again->consumed, 0u);
  EXPECT_FALSE(again->sealed.load());
  EXPECT_EQ(again->next_free, nullptr);
  EXPECT_EQ(pool.allocated(), 2u);
  EXPECT_EQ(pool.Acquire(), nullptr);
  pool.Release(chunks[0]);
  pool.Release(again);
  EXPECT_EQ(pool.in_use(), 0u);
  EXPECT_EQ(pool.allocated(), 2u) << "released chunks stay allocated for reuse";
}

TEST(ChunkPool, LoweringCapacityFreesIdleChunksAtOnce) {
  ChunkPool pool;
  pool.SetCapacity(6);
  std::vector<Chunk*> chunks = AcquireAll(pool, 6);
  ASSERT_EQ(chunks.size(), 6u);
  for (Chunk* chunk : chunks) pool.Release(chunk);
  EXPECT_EQ(pool.allocated(), 6u);

  pool.SetCapacity(2);
  EXPECT_EQ(pool.capacity(), 2u);
  EXPECT_EQ(pool.allocated(), 2u);
  EXPECT_EQ(pool.in_use(), 0u);
  chunks = AcquireAll(pool, 10);
  EXPECT_EQ(chunks.size(), 2u);
  for (Chunk* chunk : chunks) pool.Release(chunk);
}

TEST(ChunkPool, LoweringCapacityFreesChunksInUseAsTheyComeBack) {
  ChunkPool pool;
  pool.SetCapacity(4);
  std::vector<Chunk*> chunks = AcquireAll(pool, 4);
  ASSERT_EQ(chunks.size(), 4u);

  pool.SetCapacity(2);
  EXPECT_EQ(pool.allocated(), 4u) << "chunks in use cannot be freed yet";
  EXPECT_FALSE(pool.MaybeAvailable());
  EXPECT_EQ(pool.Acquire(), nullptr);

  pool.Release(chunks[0]);
  EXPECT_EQ(pool.allocated(), 3u);
  pool.Release(chunks[1]);
  EXPECT_EQ(pool.allocated(), 2u);
  EXPECT_EQ(pool.Acquire(), nullptr) << "in use (2) already equals the new capacity";
  pool.Release(chunks[2]);
  pool.Release(chunks[3]);
  EXPECT_EQ(pool.allocated(), 2u);
  EXPECT_EQ(pool.in_use(), 0u);

  chunks = AcquireAll(pool, 10);
  EXPECT_EQ(chunks.size(), 2u);
  EXPECT_LE(pool.allocated(), pool.capacity());
  for (Chunk* chunk : chunks) pool.Release(chunk);
}

TEST(ChunkPool, RaisingCapacityAllowsMoreChunks) {
  ChunkPool pool;
  pool.SetCapacity(1);
  std::vector<Chunk*> chunks = AcquireAll(pool, 10);
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_FALSE(pool.MaybeAvailable());

  pool.SetCapacity(3);
  EXPECT_TRUE(pool.MaybeAvailable()) << "raising the capacity clears the exhausted hint";
  std::vector<Chunk*> more = AcquireAll(pool, 10);
  EXPECT_EQ(more.size(), 2u);
  EXPECT_EQ(pool.allocated(), 3u);
  for (Chunk* chunk : chunks) pool.Release(chunk);
  for (Chunk* chunk : more) pool.Release(chunk);
}

}  // namespace
}  // namespace smprof::internal
