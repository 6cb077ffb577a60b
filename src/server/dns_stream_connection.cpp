#include "dns_stream_connection.hpp"

#include <algorithm>
#include <asio/write.hpp>
#include <type_traits>

#include "moat/core/bytes.hpp"
#include "moat/core/log.hpp"
#include "moat/wire/padding.hpp"
#include "moat/wire/types.hpp"

namespace moat::server {
namespace {

template <typename Stream>
constexpr bool kPlainTcp = std::is_same_v<Stream, asio::ip::tcp::socket>;

}  // namespace

template <typename Stream>
DnsStreamConnection<Stream>::DnsStreamConnection(Stream stream, engine::Client client,
                                                 QueryPath& path, const ServerOptions& options,
                                                 ConnectionSlot slot, upstream::TurnEnd& turn_end)
    : stream_(std::move(stream)),
      idle_(stream_.get_executor(), options.tcp_idle_timeout),
      path_(path),
      options_(options),
      slot_(std::move(slot)),
      turn_end_(turn_end),
      client_(client),
      resume_at_turn_end_(turn_end, [this] { resume(); }) {}

template <typename Stream>
void DnsStreamConnection<Stream>::start() {
    if constexpr (kPlainTcp<Stream>) {
        std::error_code ec;  // on failure every write goes the asynchronous way
        stream_.non_blocking(true, ec);
        write_directly_ = !ec;
    }
    watch_idle();
    read_more();
}

template <typename Stream>
void DnsStreamConnection<Stream>::drain() {
    read_stopped_ = true;
    std::error_code ignored;
    stream_.lowest_layer().shutdown(asio::ip::tcp::socket::shutdown_receive, ignored);
    close_if_done();
}

template <typename Stream>
void DnsStreamConnection<Stream>::watch_idle() {
    idle_.wait([self = this->shared_from_this()](const std::error_code& ec) {
        if (ec || self->closed_) {
            return;
        }
        // Answers queued for the end of a turn count as work: they have not left yet.
        if (self->unanswered_ == 0 && self->writing_.empty() && self->queued_.empty()) {
            log::debug("{}: closing idle connection from {}",
                       engine::to_text(self->client_.transport), self->client_.address.to_text());
            self->close();
        } else {
            self->idle_.touch();  // still working for the client: not idle
            self->watch_idle();
        }
    });
}

template <typename Stream>
void DnsStreamConnection<Stream>::read_more() {
    if (reading_ || read_stopped_ || closed_ || unanswered_ >= options_.tcp_max_pipelined) {
        return;  // a full pipeline resumes from answer(): a client cannot queue unbounded work
    }
    reading_ = true;
    chunk_.resize(kStreamReadChunk);
    stream_.async_read_some(asio::buffer(chunk_), [self = this->shared_from_this()](
                                                      const std::error_code& ec, std::size_t n) {
        // A batch: what the queries read here forward leaves when they are all taken, not in a
        // handler posted behind another poll of the sockets (upstream/turn_end.hpp).
        self->turn_end_.in_batch([&] { self->on_read(ec, n); });
    });
}

template <typename Stream>
void DnsStreamConnection<Stream>::on_read(const std::error_code& ec, std::size_t n) {
    reading_ = false;
    if (!ec) {
        input_.insert(input_.end(), chunk_.begin(),
                      chunk_.begin() + static_cast<std::ptrdiff_t>(n));
    }
    if (ec || closed_) {
        read_stopped_ = true;  // EOF or error: finish the answers, then close
        close_if_done();
        return;
    }
    const std::uint64_t started_before = queries_started_;
    if (!take_queries()) {
        log::debug("{}: a frame shorter than a DNS header from {}; closing",
                   engine::to_text(client_.transport), client_.address.to_text());
        read_stopped_ = true;
    }
    if (queries_started_ != started_before) {
        // Only a whole query counts as activity: a client trickling a byte at a time (slow
        // loris) is closed after idle_timeout like an idle one.
        idle_.touch();
    }
    write_next();
    read_more();
    close_if_done();
}

template <typename Stream>
bool DnsStreamConnection<Stream>::take_queries() {
    constexpr bool kTls = std::is_same_v<Stream, TlsStream>;
    std::size_t at = 0;
    bool trusted = true;
    taking_ = true;
    while (!closed_ && unanswered_ < options_.tcp_max_pipelined && input_.size() - at >= 2) {
        const std::size_t length = load_u16(input_.data() + at);
        if (length < wire::kHeaderSize) {
            trusted = false;  // not even a header: the framing cannot be trusted
            input_.clear();
            at = 0;
            break;
        }
        if (input_.size() - at - 2 < length) {
            break;
        }
        const std::span<const std::uint8_t> query(input_.data() + at + 2, length);
        at += 2 + length;
        ++unanswered_;
        ++queries_started_;
        slot_.set_busy(true);
        bool pad = false;
        if constexpr (kTls) {
            const auto view = wire::MessageView::parse(query);
            pad = view && wire::query_wants_padding(*view);
        }
        const auto handled = path_.handle(query, client_, [self = this->shared_from_this(), pad] {
            return ReplyFn(
                [self, pad](std::span<const std::uint8_t> reply) { self->answer(reply, pad); });
        });
        if (!handled.deferred) {
            answer(handled.answer, pad);
        }
    }
    taking_ = false;
    input_.erase(input_.begin(), input_.begin() + static_cast<std::ptrdiff_t>(at));
    return trusted;
}

template <typename Stream>
void DnsStreamConnection<Stream>::answer(std::span<const std::uint8_t> reply, bool pad) {
    --unanswered_;
    if (!closed_ && !reply.empty()) {
        const std::size_t at = queued_.size();
        const std::size_t room = std::min<std::size_t>(
            reply.size() + (pad ? wire::kResponsePaddingBlock + 4 : 0), 65535);
        queued_.resize(at + 2 + room);
        std::copy(reply.begin(), reply.end(),
                  queued_.begin() + static_cast<std::ptrdiff_t>(at + 2));
        std::size_t length = reply.size();
        if (pad) {
            length = wire::pad_response(std::span(queued_.data() + at + 2, room), length);
        }
        queued_.resize(at + 2 + length);
        store_u16(queued_.data() + at, static_cast<std::uint16_t>(length));
    }
    if (taking_) {
        return;  // take_queries()'s caller writes the whole batch at once
    }
    // The answers the upstreams return in one turn leave together at its end, in one write.
    // The connection lives until then: while it is open its idle watch holds it.
    resume_at_turn_end_.defer();
}

template <typename Stream>
void DnsStreamConnection<Stream>::resume() {
    if (!take_queries()) {
        read_stopped_ = true;
    }
    write_next();
    read_more();
    close_if_done();
}

template <typename Stream>
void DnsStreamConnection<Stream>::write_next() {
    if (!writing_.empty() || queued_.empty() || closed_) {
        return;
    }
    writing_.swap(queued_);
    std::size_t written = 0;
    if (kPlainTcp<Stream> && write_directly_) {
        // Written now when the socket takes it all, as it nearly always does: an asynchronous
        // write's handler is posted even when it completes at once, and Asio polls the sockets
        // before it runs a posted handler, a system call per answer (docs/benchmarks.md). Over
        // TLS a partial write would leave the record half sent, so DoT waits for the handler.
        std::error_code ec;
        written = stream_.write_some(asio::buffer(writing_), ec);
        if (ec && ec != asio::error::would_block) {
            writing_.clear();
            close();
            return;
        }
        if (written == writing_.size()) {
            writing_.clear();
            return;
        }
    }
    asio::async_write(stream_, asio::buffer(writing_.data() + written, writing_.size() - written),
                      [self = this->shared_from_this()](const std::error_code& ec, std::size_t) {
                          self->writing_.clear();
                          if (ec) {
                              self->close();
                              return;
                          }
                          self->write_next();
                          self->close_if_done();
                      });
}

template <typename Stream>
void DnsStreamConnection<Stream>::close_if_done() {
    if (unanswered_ == 0 && writing_.empty() && queued_.empty()) {
        slot_.set_busy(false);
        if (read_stopped_) {
            close();
        }
    }
}

template <typename Stream>
void DnsStreamConnection<Stream>::close() {
    if (closed_) {
        return;
    }
    closed_ = true;
    slot_.set_busy(false);
    idle_.cancel();
    std::error_code ignored;
    stream_.lowest_layer().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
    stream_.lowest_layer().close(ignored);
}

template class DnsStreamConnection<asio::ip::tcp::socket>;
template class DnsStreamConnection<TlsStream>;

}  // namespace moat::server
