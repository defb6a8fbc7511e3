// VirtualRecords: a virtual run's request records and the measured counts its progress shows.
#pragma once

#include <cstdint>

#include "driver/load_options.h"
#include "driver/log_histogram.h"
#include "driver/request_source.h"
#include "predict/virtual_flight.h"

namespace kvsweep::predict {

// Where a predicted run's epoch is: this many seconds plus the fleet's virtual time at the
// run's start. Not a unix time: a predicted cell happened at no wall time. Non-zero, because
// the cell recorder reads an epoch of 0 as "no such phase".
inline constexpr double kVirtualEpochS = 1.0;

// The bookkeeping of a virtual run: each request's RequestRecord, filled as run_load's
// transfers fill theirs (what reached the client, when), and the counts of measured requests
// that progress reports. Times in are the fleet's absolute virtual seconds; records hold them
// relative to the run's epoch.
class VirtualRecords {
 public:
  VirtualRecords(const driver::LoadOptions& options, double epoch_s);

  double rel(double t_s) const { return t_s - epoch_; }
  driver::RequestRecord& at(std::int64_t index) {
    return load_.records[static_cast<std::size_t>(index)];
  }

  // `job` left the client at `sent_s`.
  void open(const driver::Job& job, double sent_s);
  // The answer's last byte reached the client at `now_s`: the record is final. Returns ok.
  bool answered(std::int64_t index, const VirtualFlight& flight, double now_s);
  // The client gave up at `now_s` (flight.abandon_kind): what had arrived by then stays.
  void abandoned(std::int64_t index, const VirtualFlight& flight, double now_s);
  // The stop flag at `now_s`: the request ends as cancelled, with its status line only.
  void cancelled(std::int64_t index, const VirtualFlight& flight, double now_s);
  // A record became final: counted when measured.
  void count(std::int64_t index, bool ok);

  // As run_load reports it; `measured_start_s` is the source's, < 0 before the first.
  driver::Progress progress(double now_s, double measured_start_s) const;

  void set_interrupted() { load_.interrupted = true; }
  driver::LoadResult take() { return std::move(load_); }

 private:
  void set_token_times(driver::RequestRecord& record, const VirtualFlight& flight) const;

  const driver::LoadOptions& options_;
  const double epoch_;
  driver::LoadResult load_;
  std::int64_t measured_done_ = 0;
  std::int64_t measured_failed_ = 0;
  driver::LogHistogram ttft_ms_;
};

}  // namespace kvsweep::predict
