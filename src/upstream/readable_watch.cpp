#include "moat/upstream/readable_watch.hpp"

#include <asio/version.hpp>
#include <cstddef>
#include <utility>

#include "moat/upstream/datagram_batch.hpp"

// The versions whose epoll_reactor (start_op, its speculative path, descriptor_state's
// try_speculative_) this was checked against: 1.22, Debian 12's. Later versions changed
// start_op (immediate completions); read them before widening this.
#if !defined(MOAT_READABLE_WATCH_ASYNC_WAIT) && defined(ASIO_HAS_EPOLL) && \
    !defined(ASIO_HAS_IO_URING_AS_DEFAULT) && ASIO_VERSION >= 102200 && ASIO_VERSION < 102300
#define MOAT_READABLE_WATCH_SPECULATIVE 1
#include <asio/detail/reactor.hpp>
#include <asio/detail/reactor_op.hpp>
#include <asio/execution/context.hpp>
#include <asio/query.hpp>
#else
#define MOAT_READABLE_WATCH_SPECULATIVE 0
#endif

namespace moat::upstream {

#if MOAT_READABLE_WATCH_SPECULATIVE

namespace {

/// The socket's registration with the reactor, which asio keeps in a protected member.
struct SocketRegistration : asio::ip::udp::socket {
    static asio::detail::reactor::per_descriptor_data& of(asio::ip::udp::socket& socket) {
        return (socket.*&SocketRegistration::impl_).get_implementation().reactor_data_;
    }
};

}  // namespace

/// A read operation that reads nothing: the reactor "performs" it when the socket is worth
/// reading, and it says the socket is drained (done_and_exhausted), so the next start skips both
/// the speculative perform and the epoll_ctl until an edge comes. The owner then reads.
class ReadableWatch::Operation final : public asio::detail::reactor_op {
public:
    Operation(asio::ip::udp::socket& socket, Handler on_readable)
        : reactor_op(std::error_code(), &perform, &complete),
          reactor(asio::use_service<asio::detail::reactor>(
              asio::query(socket.get_executor(), asio::execution::context))),
          handler(std::move(on_readable)) {}

    asio::detail::reactor& reactor;
    Handler handler;
    bool pending = false;
    bool orphaned = false;  ///< the watch is gone: free this when the reactor lets it go

private:
    static status perform(reactor_op* /*op*/) { return done_and_exhausted; }

    /// `owner` is null when the io_context is destroyed with the wait pending.
    static void complete(void* owner, asio::detail::operation* base, const std::error_code& /*ec*/,
                         std::size_t /*bytes*/) {
        auto* op = static_cast<Operation*>(base);
        op->pending = false;
        const std::error_code ec = std::exchange(op->ec_, std::error_code());
        if (op->orphaned) {
            delete op;  // handed back by the reactor, and nobody else holds it
            return;
        }
        if (owner != nullptr) {
            op->handler(ec);
        }
    }
};

void ReadableWatch::start(bool trust_edges) {
    operation_->pending = true;
    // Speculative: complete at once if an edge came since the last completion, else wait without
    // a system call. Not speculative: re-arm the registration (EPOLL_CTL_MOD), as async_wait does.
    operation_->reactor.start_op(asio::detail::reactor::read_op, socket_.native_handle(),
                                 SocketRegistration::of(socket_), operation_,
                                 /*is_continuation=*/false, /*allow_speculative=*/trust_edges);
}

bool ReadableWatch::skips_rearm() noexcept { return true; }

#else  // async_wait, which re-arms the registration each time

class ReadableWatch::Operation {
public:
    Operation(asio::ip::udp::socket& /*socket*/, Handler on_readable)
        : handler(std::move(on_readable)) {}

    Handler handler;
    bool pending = false;
    bool orphaned = false;
};

namespace {

/// async_wait's handler. Destroyed without a call when the io_context is destroyed with the wait
/// pending: then it hands the operation back, as the reactor does on the speculative path.
template <typename Operation>
class Completion {
public:
    explicit Completion(Operation* op) noexcept : op_(op) {}
    Completion(Completion&& other) noexcept : op_(std::exchange(other.op_, nullptr)) {}
    Completion(const Completion&) = delete;
    Completion& operator=(const Completion&) = delete;
    Completion& operator=(Completion&&) = delete;
    ~Completion() { release(); }

    void operator()(const std::error_code& ec) {
        Operation* op = op_;
        if (release()) {
            op->handler(ec);
        }
    }

private:
    /// True when the watch still wants the handler called.
    bool release() noexcept {
        Operation* op = std::exchange(op_, nullptr);
        if (op == nullptr) {
            return false;
        }
        op->pending = false;
        if (op->orphaned) {
            delete op;  // the watch left it to us
            return false;
        }
        return true;
    }

    Operation* op_;
};

}  // namespace

void ReadableWatch::start(bool /*trust_edges*/) {
    operation_->pending = true;
    socket_.async_wait(asio::socket_base::wait_read, Completion<Operation>(operation_));
}

bool ReadableWatch::skips_rearm() noexcept { return false; }

#endif

ReadableWatch::ReadableWatch(asio::ip::udp::socket& socket, Handler on_readable)
    : socket_(socket),
      // Not a unique_ptr: while a wait is pending the reactor holds it (~ReadableWatch).
      operation_(new Operation(socket, std::move(on_readable))) {}

ReadableWatch::~ReadableWatch() {
    if (operation_->pending) {
        operation_->orphaned = true;  // the reactor still holds it and frees it
    } else {
        delete operation_;
    }
}

void ReadableWatch::wait() { start(true); }

void ReadableWatch::rearm() { start(false); }

void ReadableWatch::wait_after(const DatagramBatch& last_read) {
    if (last_read.emptied()) {
        wait();  // the next datagram is a new edge: no re-arm
    } else {
        rearm();  // never read, or the read failed: whatever waits is reported again
    }
}

}  // namespace moat::upstream
