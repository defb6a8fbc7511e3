// Cell claims in the store: which process runs each cell, and its heartbeat.
#include <string>
#include <vector>

#include "common/wall_clock.h"
#include "store/sqlite_handles.h"
#include "store/store.h"
#include "store/store_impl.h"

namespace kvsweep::store {
namespace {

constexpr const char* kClaimColumns =
    "cell_claims.cell_id, run_id, host, pid, pid_namespace, claimed_at, heartbeat_s";

CellClaim read_claim(const SqliteStatement& s) {
  CellClaim claim;
  claim.cell_id = s.column_int64(0);
  claim.owner.run_id = s.column_text(1);
  claim.owner.host = s.column_text(2);
  claim.owner.pid = s.column_int64(3);
  claim.owner.pid_namespace = s.column_text(4);
  claim.claimed_at = s.column_text(5);
  claim.heartbeat_s = s.column_double(6);
  return claim;
}

}  // namespace

void require_claim(const SqliteDb& db, std::int64_t cell_id, const std::string& run_id) {
  SqliteStatement s =
      db.prepare(std::string("SELECT ") + kClaimColumns + " FROM cell_claims WHERE cell_id = ?");
  s.bind_int64(1, cell_id);
  if (!s.step()) {
    throw ClaimLost(db.path() + ": cell " + std::to_string(cell_id) + " is no longer claimed by " +
                    "this run (run " + run_id + ")");
  }
  const CellClaim claim = read_claim(s);
  if (claim.owner.run_id == run_id) return;
  throw ClaimLost(db.path() + ": cell " + std::to_string(cell_id) + " was taken over by pid " +
                  std::to_string(claim.owner.pid) + " on " + claim.owner.host + " (run " +
                  claim.owner.run_id + ", claimed " + claim.claimed_at + ")");
}

void drop_claim(const SqliteDb& db, std::int64_t cell_id) {
  SqliteStatement s = db.prepare("DELETE FROM cell_claims WHERE cell_id = ?");
  s.bind_int64(1, cell_id);
  s.step();
}

std::vector<CellClaim> Store::claims(std::int64_t experiment_id) const {
  SqliteStatement s =
      impl_->db.prepare(std::string("SELECT ") + kClaimColumns +
                        " FROM cell_claims JOIN cells ON cells.id = cell_claims.cell_id "
                        "WHERE cells.experiment_id = ? ORDER BY cells.ordinal, cells.id");
  s.bind_int64(1, experiment_id);
  std::vector<CellClaim> claims;
  while (s.step()) claims.push_back(read_claim(s));
  return claims;
}

void Store::claim_cells(const std::vector<std::int64_t>& cell_ids, const ClaimOwner& owner,
                        double now_s) {
  const SqliteDb& db = impl_->db;
  Transaction transaction(db);
  SqliteStatement s = db.prepare(
      "INSERT OR REPLACE INTO cell_claims (cell_id, run_id, host, pid, pid_namespace, "
      "claimed_at, heartbeat_s) VALUES (?,?,?,?,?,?,?)");
  const std::string claimed_at = utc_iso8601(now_s);
  for (const std::int64_t cell_id : cell_ids) {
    s.bind_int64(1, cell_id);
    s.bind_text(2, owner.run_id);
    s.bind_text(3, owner.host);
    s.bind_int64(4, owner.pid);
    s.bind_text(5, owner.pid_namespace);
    s.bind_text(6, claimed_at);
    s.bind_double(7, now_s);
    s.step();
    s.reset();
  }
  transaction.commit();
}

int Store::beat(const std::string& run_id, double now_s) {
  SqliteStatement s = impl_->db.prepare("UPDATE cell_claims SET heartbeat_s = ? WHERE run_id = ?");
  s.bind_double(1, now_s);
  s.bind_text(2, run_id);
  s.step();
  return impl_->db.changes();
}

void Store::release_claims(const std::string& run_id) {
  SqliteStatement s = impl_->db.prepare("DELETE FROM cell_claims WHERE run_id = ?");
  s.bind_text(1, run_id);
  s.step();
}

}  // namespace kvsweep::store
