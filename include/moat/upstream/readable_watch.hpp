// Waits until a datagram socket that its owner reads until empty has something to read again,
// without the system call asio's async_wait makes to start every wait.
//
// Why: async_wait cannot know whether the socket is empty, so each wait re-arms the socket's
// edge-triggered epoll registration (epoll_ctl(EPOLL_CTL_MOD)), and data already waiting is
// reported again. The UDP listeners and the upstream pool read with recvmmsg until a read returns
// fewer datagrams than it asked for: then the socket was empty, and the next datagram is a new
// edge, which the registration made when the socket was opened reports anyway. wait() starts
// through the reactor's speculative path instead, which makes no system call unless an edge came
// since the last wait completed (and then completes at once). At a household's pace that saves
// one system call in four per wake-up: two per forwarded query, one per answer from the cache or
// the blocklist (docs/benchmarks.md, "Waits without re-arming").
//
// The speculative start is asio's detail layer (reactor_op, epoll_reactor::start_op), so it is
// used only with the asio version whose reactor was read for it (1.22, Debian 12's); with any
// other, and when MOAT_READABLE_WATCH_ASYNC_WAIT is defined (the fallback's tests), both waits
// are async_wait.
//
// Used from the socket's io_context thread only, one wait at a time.
#pragma once

#include <asio/ip/udp.hpp>
#include <functional>
#include <system_error>

namespace moat::upstream {

class DatagramBatch;

class ReadableWatch {
public:
    /// Called once per wait: with no error when the socket may have datagrams (a read can find it
    /// empty: after the first wait, or after an edge whose datagrams an earlier read took), with
    /// asio::error::operation_aborted when the socket was cancelled or closed.
    using Handler = std::function<void(const std::error_code&)>;

    /// `socket` must outlive the watch; it may be opened after the watch is made.
    ReadableWatch(asio::ip::udp::socket& socket, Handler on_readable);
    /// A wait still pending is left to the reactor, which completes or destroys it later without
    /// calling the handler.
    ~ReadableWatch();
    ReadableWatch(const ReadableWatch&) = delete;
    ReadableWatch& operator=(const ReadableWatch&) = delete;
    ReadableWatch(ReadableWatch&&) = delete;
    ReadableWatch& operator=(ReadableWatch&&) = delete;

    /// Waits for the next datagram. Only when the last read found the socket empty
    /// (DatagramBatch::emptied), or it was never read: a datagram left waiting behind a partial
    /// read is not reported until another arrives.
    void wait();
    /// Waits for a datagram, reporting one that waits already: after a read that failed.
    void rearm();
    /// The wait that follows a read with `last_read`: wait() when that read found the socket
    /// empty, rearm() when it failed or has not happened (what is left is reported again).
    void wait_after(const DatagramBatch& last_read);

    /// Whether wait() skips the re-arm in this build (false: it is async_wait).
    static bool skips_rearm() noexcept;

private:
    class Operation;
    void start(bool trust_edges);

    asio::ip::udp::socket& socket_;
    Operation* operation_;  ///< owned, but the reactor's while a wait is pending
};

}  // namespace moat::upstream
