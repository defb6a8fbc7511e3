// The KV block pool and its prefix cache: ref counts, the LRU free queue, hash -> block map.
#pragma once

#include <cstdint>
#include <functional>
#include <unordered_map>
#include <utility>
#include <vector>

namespace kvsweep::sim {

using BlockId = int;

// vLLM's KV events (vllm/distributed/kv_events.py BlockStored / BlockRemoved), one hash each:
// what a KV-aware router (Dynamo) indexes. A hash is "stored" when it first becomes hittable in
// this pool and "removed" when it stops being hittable (evicted or reset). Duplicates that never
// entered the hash map produce no event, so stored/removed pair up exactly.
struct KvEvent {
  enum class Kind { kStored, kRemoved };
  Kind kind = Kind::kStored;
  std::uint64_t block_hash = 0;
};
using KvEventListener = std::function<void(const KvEvent&)>;

// vLLM v1 BlockPool semantics. A block is "held" while ref_cnt > 0; otherwise it sits in the
// free queue, possibly still carrying a hash, and stays hittable until it is popped for reuse.
// Invariants: a block is in the free queue iff its ref_cnt is 0; every map entry points at a
// block carrying that hash. Single-threaded (the engine's io thread).
class BlockPool {
 public:
  explicit BlockPool(int num_blocks);

  // Longest run of leading `hashes` present in the cache, at most max_blocks, as block ids.
  // Does not take references: call touch() on what you keep. Nothing while caching is off.
  std::vector<BlockId> find_cached(const std::vector<std::uint64_t>& hashes, int max_blocks) const;

  // Takes a reference on each block; a block leaving ref_cnt 0 leaves the free queue.
  void touch(const std::vector<BlockId>& blocks);

  // Pops `count` blocks from the head of the free queue (least recently freed first) and
  // appends them to *out with ref_cnt 1. A popped block that carries a hash is evicted from the
  // cache. Returns false and changes nothing if fewer than `count` blocks are free.
  bool allocate(int count, std::vector<BlockId>* out);

  // Records that `block` is now full of computed tokens with chained hash `hash`. If another
  // block already maps that hash, the existing mapping is kept (v1 block tables are
  // append-only, so the duplicate lives until its request frees it). Does nothing while
  // caching is off.
  void cache_block(BlockId block, std::uint64_t hash);

  // Drops one reference from each block; blocks reaching ref_cnt 0 join the free-queue TAIL in
  // reverse order (last block first), so a request's tail blocks are evicted before its head.
  void free_blocks(const std::vector<BlockId>& blocks);

  // Forgets the hash of every free block. Held blocks keep theirs; returns false if any block
  // is held (vLLM refuses the reset then; we still clear what we can).
  bool reset_cache();

  // vLLM --no-enable-prefix-caching: off, nothing is hittable or registered, while blocks are
  // still allocated and freed as usual. Turning it off forgets the hash of every free block now
  // and of every held block when it is freed (each reported removed), so that the pool, and an
  // index fed by its events, ends up empty once the requests in flight are done.
  void set_caching(bool enabled);
  bool caching() const { return caching_; }

  // Called synchronously on every stored/removed hash; empty to stop. Same thread as the pool.
  void set_event_listener(KvEventListener listener) { listener_ = std::move(listener); }

  int num_blocks() const { return static_cast<int>(ref_cnt_.size()); }
  int num_free() const { return num_free_; }
  int num_held() const { return num_blocks() - num_free_; }
  int num_cached() const { return static_cast<int>(cached_.size()); }
  int ref_cnt(BlockId block) const { return ref_cnt_[block]; }
  bool is_cached(std::uint64_t hash) const { return cached_.contains(hash); }
  // Free-queue order from head (next to be evicted) to tail; for tests.
  std::vector<BlockId> free_queue() const;

 private:
  void unlink(BlockId block);
  void push_tail(BlockId block);
  void evict_hash(BlockId block);

  std::vector<int> ref_cnt_;
  std::vector<std::uint64_t> hash_;
  std::vector<bool> has_hash_;
  // The free queue is an intrusive doubly linked ring through prev_/next_, with a sentinel at
  // index num_blocks, so a cache hit can pull a block out of the middle in O(1).
  std::vector<BlockId> prev_;
  std::vector<BlockId> next_;
  int num_free_ = 0;
  std::unordered_map<std::uint64_t, BlockId> cached_;
  bool caching_ = true;
  KvEventListener listener_;
};

}  // namespace kvsweep::sim
