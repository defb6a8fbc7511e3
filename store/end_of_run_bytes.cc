// How much room the write that ends a run needs in the store's files (its WAL frames), so the
// run can keep that much free while it writes (space_reserve.h).
#include <cstdint>

#include "store/sqlite_handles.h"
#include "store/store.h"
#include "store/store_impl.h"

namespace kvsweep::store {
namespace {

// A claim row (schema.cc: cell id, run id, host, pid, pid namespace, claimed_at, heartbeat) with
// its cell header and pointer is under 200 bytes for a 64-byte host name; an entry of the
// cell_claims_run index (run id, cell id) under 40.
constexpr std::int64_t kClaimRowBytes = 256;
constexpr std::int64_t kClaimIndexBytes = 64;
// What a WAL adds besides pages: its header (when the log restarts), a header per frame, and
// one more 32 KiB region of the -shm index, which a commit needs when its frames cross the end
// of the last region.
constexpr std::int64_t kWalHeaderBytes = 32;
constexpr std::int64_t kFrameHeaderBytes = 24;
constexpr std::int64_t kShmRegionBytes = 32 * 1024;

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

}  // namespace

std::int64_t Store::bytes_to_end_a_run(std::int64_t experiment_bytes, std::int64_t claims) const {
  SqliteStatement s = impl_->db.prepare("PRAGMA page_size");
  s.step();
  const std::int64_t page = s.column_int64(0);
  // Every page the transaction changes is one frame in the WAL. A status of another length
  // rewrites the experiment's row whole: its leaf page; a new chain of overflow pages when the
  // row is longer than a leaf holds (4 bytes of each link to the next) while the old chain is
  // freed, each of its pages overwritten with zeros where SQLite is built with secure delete
  // (Debian's is); and a split when the leaf no longer holds the row: two new pages and their
  // parent.
  const std::int64_t overflow =
      experiment_bytes > page - 35 ? ceil_div(experiment_bytes, page - 4) : 0;
  const std::int64_t row_pages = 1 + 2 * overflow + 3;
  // A run's claims are contiguous in the table (its cells' ids are) and in the run-id index:
  // deleting them changes the pages holding them, one more where they start mid-page, and
  // where a page empties, a neighbour and the parent; the interior pages above them too.
  const auto tree_pages = [&](std::int64_t entry_bytes) {
    const std::int64_t leaves = ceil_div(claims * entry_bytes, page) + 1;
    return leaves + 3 + ceil_div(leaves, page / 16);
  };
  const std::int64_t claim_pages = tree_pages(kClaimRowBytes) + tree_pages(kClaimIndexBytes);
  // Page 1 (the free page count) and the free-list trunk pages that list the pages freed, a
  // trunk per (page / 4 - 2) of them.
  const std::int64_t free_list_pages = 1 + ceil_div(row_pages + claim_pages, page / 4 - 2);
  const std::int64_t frames = row_pages + claim_pages + free_list_pages;
  return kWalHeaderBytes + frames * (page + kFrameHeaderBytes) + kShmRegionBytes;
}

}  // namespace kvsweep::store
