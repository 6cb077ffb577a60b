// What the stream listeners (TCP, DoT, DoH) and their connections share: the open-connection
// counts behind the cap and /metrics, the "busy" count a graceful shutdown waits for, and the
// interface a listener drains its connections through. Connections may outlive their listener,
// so the counts live in shared_ptrs.
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "moat/core/ip.hpp"
#include "moat/metrics/instruments.hpp"

namespace moat::server {

/// The most a stream connection (TCP, DoT, DoH) reads at once: a full TLS record's plaintext.
inline constexpr std::size_t kStreamReadChunk = 16384;

/// Open connections over every stream listener, and the most there have been (for /metrics).
struct StreamTotals {
    std::size_t open = 0;
    metrics::PeakGauge gauge;
    /// Open connections of each client address, for the per-client cap. A plain vector: it has
    /// at most one entry per open connection, a few hundred at the very most.
    std::vector<std::pair<IpAddress, std::size_t>> per_client;

    [[nodiscard]] std::size_t open_from(const IpAddress& client) const noexcept {
        const auto it = find(client);
        return it == per_client.end() ? 0 : it->second;
    }
    void opened_from(const IpAddress& client) {
        if (auto it = find(client); it != per_client.end()) {
            ++it->second;
        } else {
            per_client.emplace_back(client, 1);
        }
    }
    void closed_from(const IpAddress& client) noexcept {
        if (auto it = find(client); it != per_client.end() && --it->second == 0) {
            *it = per_client.back();
            per_client.pop_back();
        }
    }

private:
    [[nodiscard]] std::vector<std::pair<IpAddress, std::size_t>>::const_iterator find(
        const IpAddress& client) const noexcept {
        return std::find_if(per_client.begin(), per_client.end(),
                            [&](const auto& entry) { return entry.first == client; });
    }
    [[nodiscard]] std::vector<std::pair<IpAddress, std::size_t>>::iterator find(
        const IpAddress& client) noexcept {
        return std::find_if(per_client.begin(), per_client.end(),
                            [&](const auto& entry) { return entry.first == client; });
    }
};

/// Counters of one listener.
struct StreamShared {
    std::shared_ptr<StreamTotals> totals;
    std::size_t connections = 0;  ///< from accept (handshakes included) to close
    std::size_t busy = 0;         ///< connections with a query unanswered or an answer unwritten
    bool draining = false;
};

/// One accepted connection's place under the caps: counted while the slot lives, from accept
/// through the PROXY header and TLS handshake to the connection's end. `client`, when given, is
/// the address the per-client cap counts it against.
class ConnectionSlot {
public:
    ConnectionSlot() = default;
    ConnectionSlot(std::shared_ptr<StreamShared> shared, std::optional<IpAddress> client)
        : shared_(std::move(shared)), client_(client) {
        ++shared_->connections;
        shared_->totals->gauge.set(++shared_->totals->open);
        if (client_) {
            shared_->totals->opened_from(*client_);
        }
    }
    ~ConnectionSlot() { release(); }
    ConnectionSlot(ConnectionSlot&& other) noexcept
        : shared_(std::move(other.shared_)), client_(other.client_), busy_(other.busy_) {
        other.busy_ = false;
    }
    ConnectionSlot& operator=(ConnectionSlot&& other) noexcept {
        if (this != &other) {
            release();
            shared_ = std::move(other.shared_);
            client_ = other.client_;
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
            if (client_) {
                shared_->totals->closed_from(*client_);
            }
            shared_.reset();
        }
    }

    std::shared_ptr<StreamShared> shared_;
    std::optional<IpAddress> client_;
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
