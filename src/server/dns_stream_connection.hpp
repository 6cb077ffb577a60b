// One DNS-over-stream connection, over plain TCP (RFC 7766) or TLS (DoT, RFC 7858): reads
// length-framed queries, answers each as soon as it is ready (pipelining, out of order), stops
// reading while too many are unanswered, and closes after an idle timeout.
//
// Reads take whatever the stream has (many pipelined queries per read and, over TLS, per
// record) and answers ready together leave in one write: a TLS record and a system call per
// batch instead of per query. Over TLS an answer to a padded query is padded (RFC 8467).
#pragma once

#include <asio/ip/tcp.hpp>
#include <asio/ssl/stream.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "idle_watch.hpp"
#include "moat/engine/client.hpp"
#include "moat/server/query_path.hpp"
#include "moat/server/server.hpp"
#include "moat/upstream/turn_end.hpp"
#include "stream_shared.hpp"

namespace moat::server {

using TlsStream = asio::ssl::stream<asio::ip::tcp::socket>;

template <typename Stream>
class DnsStreamConnection final : public StreamConnection,
                                  public std::enable_shared_from_this<DnsStreamConnection<Stream>> {
public:
    DnsStreamConnection(Stream stream, engine::Client client, QueryPath& path,
                        const ServerOptions& options, ConnectionSlot slot,
                        upstream::TurnEnd& turn_end);
    ~DnsStreamConnection() override = default;
    DnsStreamConnection(const DnsStreamConnection&) = delete;
    DnsStreamConnection& operator=(const DnsStreamConnection&) = delete;
    DnsStreamConnection(DnsStreamConnection&&) = delete;
    DnsStreamConnection& operator=(DnsStreamConnection&&) = delete;

    void start();
    void drain() override;

private:
    void read_more();
    void on_read(const std::error_code& ec, std::size_t n);
    /// Answers every complete query in the input; false when the stream cannot be trusted.
    bool take_queries();
    void answer(std::span<const std::uint8_t> reply, bool pad);
    /// After answers came back: takes the queries a full pipeline held back, writes, reads on.
    void resume();
    void write_next();
    void watch_idle();
    void close_if_done();
    void close();

    Stream stream_;
    IdleWatch idle_;
    QueryPath& path_;
    const ServerOptions& options_;
    ConnectionSlot slot_;
    upstream::TurnEnd& turn_end_;
    engine::Client client_;
    std::vector<std::uint8_t> chunk_;    ///< what the read in progress fills
    std::vector<std::uint8_t> input_;    ///< bytes read and not yet taken as queries
    std::vector<std::uint8_t> queued_;   ///< framed answers waiting for the current write
    std::vector<std::uint8_t> writing_;  ///< framed answers being written
    std::size_t unanswered_ = 0;
    std::uint64_t queries_started_ = 0;  ///< ever: what the idle timer counts as activity
    bool reading_ = false;
    bool taking_ = false;  ///< inside take_queries(): answers wait to leave as one batch
    bool read_stopped_ = false;
    bool closed_ = false;
    bool write_directly_ = false;  ///< plain TCP, socket non-blocking: answers written at once
    /// Declared last, so destroyed first: a connection gone before its turn ends is forgotten.
    upstream::TurnEnd::Task resume_at_turn_end_;
};

extern template class DnsStreamConnection<asio::ip::tcp::socket>;
extern template class DnsStreamConnection<TlsStream>;

}  // namespace moat::server
