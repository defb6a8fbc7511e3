// Move-only RAII wrappers over the SQLite C API; the only file that touches raw sqlite3 handles.
#include "store/sqlite_handles.h"

#include <sqlite3.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <stdexcept>
#include <system_error>
#include <utility>

namespace kvsweep::store {
namespace {

// A -wal file holds its 32-byte header and then one frame per page written; a longer file may
// hold transactions not yet copied into the database.
constexpr std::uintmax_t kSqliteWalHeaderBytes = 32;

bool wal_has_frames(const std::string& path) {
  std::error_code error;
  const std::uintmax_t size = std::filesystem::file_size(path + "-wal", error);
  return !error && size > kSqliteWalHeaderBytes;
}

// "file:<path>?immutable=1" with the path percent-encoded as SQLite's URI rules ask ('?', '#'
// and '%' in a file name would otherwise end or change it).
std::string immutable_uri(const std::string& path) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string uri = "file:";
  for (unsigned char c : path) {
    if (std::isalnum(c) || c == '/' || c == '-' || c == '_' || c == '.' || c == '~') {
      uri += static_cast<char>(c);
    } else {
      uri += '%';
      uri += kHex[c >> 4];
      uri += kHex[c & 0xf];
    }
  }
  return uri + "?immutable=1";
}

// The statement a message quotes: its first line, cut short. A migration's whole SQL in an
// error would bury the reason under a page of schema.
std::string quoted_sql(const std::string& sql) {
  constexpr std::size_t kMaxQuoted = 60;
  const std::size_t start = sql.find_first_not_of(" \n\t");
  std::string line = start == std::string::npos ? "" : sql.substr(start);
  const std::size_t end = line.find('\n');
  const bool cut = end != std::string::npos || line.size() > kMaxQuoted;
  line = line.substr(0, std::min(end, kMaxQuoted));
  return "\"" + line + (cut ? " ...\"" : "\"");
}

}  // namespace

bool SqliteError::disk_full() const { return (code_ & 0xff) == SQLITE_FULL; }

bool SqliteError::not_a_database() const { return (code_ & 0xff) == SQLITE_NOTADB; }

void SqliteDb::Closer::operator()(sqlite3* db) const { sqlite3_close_v2(db); }

SqliteDb::SqliteDb(std::unique_ptr<sqlite3, Closer> db, std::string path, bool read_only)
    : db_(std::move(db)), path_(std::move(path)), read_only_(read_only) {}

SqliteDb SqliteDb::open_with(const std::string& path, const std::string& name, int flags,
                             bool read_only, int busy_timeout_ms) {
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(name.c_str(), &raw, flags, nullptr);
  // sqlite3_open_v2 allocates a handle even on failure; own it before anything can throw.
  std::unique_ptr<sqlite3, Closer> owned(raw);
  if (rc != SQLITE_OK) {
    const std::string reason = raw != nullptr ? sqlite3_errmsg(raw) : sqlite3_errstr(rc);
    const int code = raw != nullptr ? sqlite3_extended_errcode(raw) : rc;
    throw SqliteError(path + ": cannot open store: " + reason, code);
  }
  sqlite3_extended_result_codes(raw, 1);
  sqlite3_busy_timeout(raw, busy_timeout_ms);
  return SqliteDb(std::move(owned), path, read_only);
}

SqliteDb SqliteDb::open(const std::string& path) {
  return open_with(path, path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, false,
                   kDefaultBusyTimeoutMs);
}

SqliteDb SqliteDb::open_read_only(const std::string& path, int busy_timeout_ms) {
  {
    SqliteDb db = open_with(path, path, SQLITE_OPEN_READONLY, true, busy_timeout_ms);
    try {
      // The first read opens the WAL index (-shm): this is where a read-only directory fails.
      db.prepare("SELECT count(*) FROM sqlite_master").step();
      return db;
    } catch (const SqliteError& e) {
      const int primary = e.code() & 0xff;
      if (primary != SQLITE_READONLY && primary != SQLITE_CANTOPEN) throw;
      if (wal_has_frames(path)) {
        throw SqliteError(std::string(e.what()) +
                              " (its -wal file holds transactions that only a process allowed "
                              "to write in the directory can read)",
                          e.code());
      }
    }
  }
  return open_with(path, immutable_uri(path), SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, true,
                   busy_timeout_ms);
}

void SqliteDb::backup_into(const SqliteDb& dest) const {
  sqlite3_backup* backup = sqlite3_backup_init(dest.db_.get(), "main", db_.get(), "main");
  if (backup == nullptr) dest.fail("starting a backup of " + path_);
  // -1: every page in one step, under one read lock; stepping in parts would restart each
  // time another process committed, and could chase a busy sweep for ever.
  const int stepped = sqlite3_backup_step(backup, -1);
  const int finished = sqlite3_backup_finish(backup);
  if (stepped != SQLITE_DONE || finished != SQLITE_OK) {
    throw SqliteError(dest.path_ + ": backup of " + path_ +
                          " failed: " + sqlite3_errstr(stepped != SQLITE_DONE ? stepped : finished),
                      stepped != SQLITE_DONE ? stepped : finished);
  }
}

bool SqliteDb::in_transaction() const { return sqlite3_get_autocommit(db_.get()) == 0; }

void SqliteDb::fail(const std::string& what) const {
  throw SqliteError(path_ + ": " + what + ": " + sqlite3_errmsg(db_.get()),
                    sqlite3_extended_errcode(db_.get()));
}

void SqliteDb::exec(const std::string& sql) const {
  if (sqlite3_exec(db_.get(), sql.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) {
    fail("executing " + quoted_sql(sql));
  }
}

SqliteStatement SqliteDb::prepare(const std::string& sql) const {
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v2(db_.get(), sql.c_str(), static_cast<int>(sql.size()), &raw, nullptr) !=
      SQLITE_OK) {
    sqlite3_finalize(raw);
    fail("preparing " + quoted_sql(sql));
  }
  return SqliteStatement(this, raw, sql);
}

std::int64_t SqliteDb::last_insert_rowid() const { return sqlite3_last_insert_rowid(db_.get()); }

int SqliteDb::changes() const { return sqlite3_changes(db_.get()); }

void SqliteStatement::Finalizer::operator()(sqlite3_stmt* stmt) const { sqlite3_finalize(stmt); }

SqliteStatement::SqliteStatement(const SqliteDb* db, sqlite3_stmt* stmt, std::string sql)
    : db_(db), stmt_(stmt), sql_(std::move(sql)) {}

void SqliteStatement::check_bind(int rc, int index) const {
  if (rc != SQLITE_OK) {
    db_->fail("binding parameter " + std::to_string(index) + " of \"" + sql_ + "\"");
  }
}

void SqliteStatement::bind_int64(int index, std::int64_t value) {
  check_bind(sqlite3_bind_int64(stmt_.get(), index, value), index);
}

void SqliteStatement::bind_double(int index, double value) {
  check_bind(sqlite3_bind_double(stmt_.get(), index, value), index);
}

void SqliteStatement::bind_text(int index, const std::string& value) {
  check_bind(sqlite3_bind_text(stmt_.get(), index, value.data(), static_cast<int>(value.size()),
                               SQLITE_TRANSIENT),
             index);
}

void SqliteStatement::bind_blob(int index, const std::string& bytes) {
  // sqlite3_bind_blob with a null pointer binds NULL; zeroblob(0) is an empty blob.
  const int rc = bytes.empty()
                     ? sqlite3_bind_zeroblob(stmt_.get(), index, 0)
                     : sqlite3_bind_blob(stmt_.get(), index, bytes.data(),
                                         static_cast<int>(bytes.size()), SQLITE_TRANSIENT);
  check_bind(rc, index);
}

void SqliteStatement::bind_null(int index) {
  check_bind(sqlite3_bind_null(stmt_.get(), index), index);
}

bool SqliteStatement::step() {
  const int rc = sqlite3_step(stmt_.get());
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  db_->fail("running " + quoted_sql(sql_));
}

void SqliteStatement::reset() {
  // sqlite3_reset repeats the last step's error code; step() already reported that one.
  sqlite3_reset(stmt_.get());
  sqlite3_clear_bindings(stmt_.get());
}

std::int64_t SqliteStatement::column_int64(int column) const {
  return sqlite3_column_int64(stmt_.get(), column);
}

double SqliteStatement::column_double(int column) const {
  return sqlite3_column_double(stmt_.get(), column);
}

std::string SqliteStatement::column_text(int column) const {
  const unsigned char* text = sqlite3_column_text(stmt_.get(), column);
  if (text == nullptr) return {};
  const int size = sqlite3_column_bytes(stmt_.get(), column);
  return std::string(reinterpret_cast<const char*>(text), static_cast<std::size_t>(size));
}

std::string SqliteStatement::column_blob(int column) const {
  const void* bytes = sqlite3_column_blob(stmt_.get(), column);
  if (bytes == nullptr) return {};
  const int size = sqlite3_column_bytes(stmt_.get(), column);
  return std::string(static_cast<const char*>(bytes), static_cast<std::size_t>(size));
}

bool SqliteStatement::column_is_null(int column) const {
  return sqlite3_column_type(stmt_.get(), column) == SQLITE_NULL;
}

Transaction::Transaction(const SqliteDb& db) : db_(db), nested_(db.in_transaction()) {
  db_.exec(nested_ ? "SAVEPOINT kvsweep_nested" : "BEGIN IMMEDIATE");
}

Transaction::~Transaction() {
  if (done_) return;
  // Errors are ignored here: a failed ROLLBACK means SQLite already rolled back.
  try {
    db_.exec(nested_ ? "ROLLBACK TO kvsweep_nested; RELEASE kvsweep_nested" : "ROLLBACK");
  } catch (const std::exception&) {
  }
}

void Transaction::commit() {
  db_.exec(nested_ ? "RELEASE kvsweep_nested" : "COMMIT");
  done_ = true;
}

}  // namespace kvsweep::store
