// What the stream listeners (TCP, DoT, DoH) and their connections share: the open-connection
// counts behind the cap and /metrics, the "busy" count a graceful shutdown waits for, and the
// interface a listener drains its connections through. Connections may outlive their listener,
// so the counts live in shared_ptrs.
#pragma once

#include <cstddef>
#include <memory>

#include "moat/metrics/instruments.hpp"

namespace moat::server {

/// Open connections over every stream listener, and the most there have been (for /metrics).
struct StreamTotals {
    std::size_t open = 0;
    metrics::PeakGauge gauge;
};

/// Counters of one listener.
struct StreamShared {
    std::shared_ptr<StreamTotals> totals;
    std::size_t connections = 0;  ///< from accept (handshakes included) to close
    std::size_t busy = 0;         ///< connections with a query unanswered or an answer unwritten
    bool draining = false;
};

/// One accepted connection's place under the cap: counted while the slot lives, from accept
/// through the PROXY header and TLS handshake to the connection's end.
class ConnectionSlot {
public:
    ConnectionSlot() = default;
    explicit ConnectionSlot(std::shared_ptr<StreamShared> shared) : shared_(std::move(shared)) {
        ++shared_->connections;
        shared_->totals->gauge.set(++shared_->totals->open);
    }
    ~ConnectionSlot() { release(); }
    ConnectionSlot(ConnectionSlot&& other) noexcept
        : shared_(std::move(other.shared_)), busy_(other.busy_) {
        other.busy_ = false;
    }
    ConnectionSlot& operator=(ConnectionSlot&& other) noexcept {
        if (this != &other) {
            release();
            shared_ = std::move(other.shared_);
            busy_ = other.busy_;
            other.busy_ = false;
        }
        return *this;
    }
    ConnectionSlot(const ConnectionSlot&) = delete;
    ConnectionSlot& operator=(const ConnectionSlot&) = delete;

    /// Marks the connection as having work a graceful shutdown must wait for.
    void set_busy(bool busy) noexcept {
        if (shared_ && busy != busy_) {
            busy_ = busy;
            busy ? ++shared_->busy : --shared_->busy;
        }
    }

private:
    void release() noexcept {
        if (shared_) {
            set_busy(false);
            --shared_->connections;
            shared_->totals->gauge.set(--shared_->totals->open);
            shared_.reset();
        }
    }

    std::shared_ptr<StreamShared> shared_;
    bool busy_ = false;
};

/// What a listener can ask of its connections.
class StreamConnection {
public:
    virtual ~StreamConnection() = default;
    StreamConnection() = default;
    StreamConnection(const StreamConnection&) = delete;
    StreamConnection& operator=(const StreamConnection&) = delete;
    StreamConnection(StreamConnection&&) = delete;
    StreamConnection& operator=(StreamConnection&&) = delete;

    /// Stops reading; closes once every answer is written.
    virtual void drain() = 0;
};

}  // namespace moat::server
