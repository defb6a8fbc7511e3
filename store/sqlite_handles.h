// Move-only RAII wrappers over the SQLite C API: a connection, a prepared statement, a transaction.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

// The raw handle types stay opaque here; only sqlite_handles.cc includes <sqlite3.h>.
struct sqlite3;
struct sqlite3_stmt;

namespace kvsweep::store {

class SqliteStatement;

// What every SQLite failure throws: the file, what was being done and SQLite's reason in the
// message, and the reason's kind for the callers that act on it (a full disk, not a database).
class SqliteError : public std::runtime_error {
 public:
  SqliteError(const std::string& message, int code) : std::runtime_error(message), code_(code) {}
  int code() const { return code_; }  // SQLite's extended result code
  bool disk_full() const;             // SQLITE_FULL: no space left for the file
  bool not_a_database() const;        // SQLITE_NOTADB: the file is not SQLite at all

 private:
  int code_;
};

// An open connection; closed by the destructor. Every error throws SqliteError naming the
// file and SQLite's reason, so a caller three layers up still knows which store failed.
class SqliteDb {
 public:
  // A generous wait: several kvsweep processes (a sweep and a report) may share one file.
  static constexpr int kDefaultBusyTimeoutMs = 10000;

  // Opens read-write, creating the file when absent.
  static SqliteDb open(const std::string& path);
  // Opens an existing file for reading only: it never writes the file, nor creates -wal or
  // -shm files where it can avoid it. In a directory it cannot write, a WAL file without its
  // -shm cannot be read the usual way; when no -wal file holds unread transactions it is then
  // opened as immutable (SQLite reads it without any lock), which is exact because nothing
  // is waiting in a -wal. busy_timeout_ms bounds how long a statement waits on another
  // process's lock before it fails (a web page must not hang). Throws SqliteError when it
  // cannot be read.
  static SqliteDb open_read_only(const std::string& path,
                                 int busy_timeout_ms = kDefaultBusyTimeoutMs);

  const std::string& path() const { return path_; }
  bool read_only() const { return read_only_; }
  bool in_transaction() const;              // inside BEGIN ... COMMIT
  void exec(const std::string& sql) const;  // one or more statements, no results
  SqliteStatement prepare(const std::string& sql) const;
  std::int64_t last_insert_rowid() const;
  // Copies this whole database into `dest` with SQLite's online backup API, in one step: the
  // copy is the snapshot of one read transaction, so a writer in another process (a sweep
  // under WAL) goes on meanwhile and the copy holds every transaction committed before it
  // began and none after. Throws SqliteError naming both files.
  void backup_into(const SqliteDb& dest) const;
  int changes() const;  // rows changed by the last INSERT/UPDATE/DELETE
  // Throws SqliteError "<path>: <what>: <sqlite3_errmsg>".
  [[noreturn]] void fail(const std::string& what) const;

  struct Closer {  // sqlite3_close_v2
    void operator()(sqlite3* db) const;
  };

 private:
  SqliteDb(std::unique_ptr<sqlite3, Closer> db, std::string path, bool read_only);
  static SqliteDb open_with(const std::string& path, const std::string& name, int flags,
                            bool read_only, int busy_timeout_ms);

  std::unique_ptr<sqlite3, Closer> db_;
  std::string path_;
  bool read_only_ = false;
};

// A prepared statement; finalized by the destructor. Bind indexes start at 1, column indexes
// at 0, as in SQLite. Must not outlive the SqliteDb that prepared it.
class SqliteStatement {
 public:
  void bind_int64(int index, std::int64_t value);
  void bind_double(int index, double value);
  void bind_text(int index, const std::string& value);
  void bind_blob(int index, const std::string& bytes);  // an empty string binds a zero-length blob
  void bind_null(int index);
  // Returns true when a row is ready to read, false when the statement is done.
  bool step();
  // Makes the statement reusable for the next row: resets it and clears its bindings.
  void reset();

  std::int64_t column_int64(int column) const;
  double column_double(int column) const;
  std::string column_text(int column) const;  // "" for NULL
  std::string column_blob(int column) const;  // the bytes; "" for NULL or a zero-length blob
  bool column_is_null(int column) const;

 private:
  friend class SqliteDb;
  struct Finalizer {
    void operator()(sqlite3_stmt* stmt) const;
  };
  SqliteStatement(const SqliteDb* db, sqlite3_stmt* stmt, std::string sql);
  void check_bind(int rc, int index) const;

  const SqliteDb* db_;
  std::unique_ptr<sqlite3_stmt, Finalizer> stmt_;
  std::string sql_;  // kept for error messages
};

// BEGIN IMMEDIATE on construction (takes the write lock up front, so a busy store waits in
// busy_timeout instead of failing mid-batch); rolls back in the destructor unless commit() ran.
// Inside another transaction it is a SAVEPOINT instead: its work commits or rolls back with
// the outer one, and its own rollback undoes only its part.
class Transaction {
 public:
  explicit Transaction(const SqliteDb& db);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  void commit();

 private:
  const SqliteDb& db_;
  bool nested_ = false;
  bool done_ = false;
};

}  // namespace kvsweep::store
