// What the driver knows of its own CPU: one thread's CPU time, and the cores it may run on.
#pragma once

namespace kvsweep::driver {

// CPU time the calling thread has used, user and system, in seconds (CLOCK_THREAD_CPUTIME_ID).
double thread_cpu_seconds();

// The cores this process may run on (its affinity mask), at least 1.
int usable_cores();

}  // namespace kvsweep::driver
