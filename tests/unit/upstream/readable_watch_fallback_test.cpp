// readable_watch_test.cpp's tests against the fallback that other asio versions build: both waits
// are async_wait. Its own binary, with the watch compiled here rather than taken from the library.
#define MOAT_READABLE_WATCH_ASYNC_WAIT 1

#include "readable_watch.cpp"       // NOLINT(bugprone-suspicious-include): the fallback build
#include "readable_watch_test.cpp"  // NOLINT(bugprone-suspicious-include): the same tests
