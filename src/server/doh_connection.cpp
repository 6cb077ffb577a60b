#include "doh_connection.hpp"

#include <algorithm>
#include <array>
#include <asio/write.hpp>
#include <string_view>
#include <type_traits>

#include "moat/core/log.hpp"
#include "moat/http/request.hpp"
#include "moat/http/response.hpp"
#include "moat/wire/types.hpp"
#include "tls_context.hpp"

namespace moat::server {
namespace {

/// RFC 9113 §6.5.2 recommends allowing at least 100 concurrent streams.
constexpr std::uint32_t kMinH2Streams = 100;
constexpr std::string_view kH2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// A status with no DNS message: the query was dropped, or the request did not carry one.
constexpr int kDropped = 400;

}  // namespace

template <typename Stream>
DohConnection<Stream>::DohConnection(Stream stream, engine::Client client, QueryPath& path,
                                     const ServerOptions& options, ConnectionSlot slot,
                                     upstream::TurnEnd& turn_end)
    : stream_(std::move(stream)),
      idle_(stream_.get_executor(), options.tcp_idle_timeout),
      path_(path),
      options_(options),
      slot_(std::move(slot)),
      turn_end_(turn_end),
      client_(client) {}

template <typename Stream>
void DohConnection<Stream>::start() {
    if constexpr (std::is_same_v<Stream, TlsStream>) {
        const bool h2 = negotiated_alpn(stream_.native_handle()) == "h2";
        if (h2) {
            start_http2();
        } else {
            protocol_ = Protocol::http1;
        }
    }
    watch_idle();
    read_more();
}

template <typename Stream>
void DohConnection<Stream>::start_http2() {
    protocol_ = Protocol::http2;
    http::H2Limits limits;
    limits.max_concurrent_streams = static_cast<std::uint32_t>(h2_stream_limit());
    limits.max_request_body_bytes = wire::kMaxMessageSize;
    h2_ = std::make_unique<http::H2ServerSession>(
        limits, [this](std::uint32_t stream, const http::H2Request& r) {
            const DohRequest request{r.method, r.path.substr(0, r.path.find('?')),
                                     r.path.find('?') == std::string_view::npos
                                         ? std::string_view{}
                                         : r.path.substr(r.path.find('?') + 1),
                                     r.content_type, r.body};
            serve(request, [self = this->shared_from_this(), stream](
                               int status, std::span<const std::uint8_t> answer) {
                self->answer_http2(stream, status, answer);
            });
        });
    h2_->start();
    flush();
}

template <typename Stream>
void DohConnection<Stream>::drain() {
    read_stopped_ = true;
    if (h2_) {
        h2_->shutdown();  // GOAWAY: the client opens no new stream here
        flush();
    } else {
        std::error_code ignored;
        stream_.lowest_layer().shutdown(asio::ip::tcp::socket::shutdown_receive, ignored);
    }
    close_if_done();
}

template <typename Stream>
bool DohConnection<Stream>::pipeline_full() const noexcept {
    if (protocol_ == Protocol::http2) {
        // A stream the client resets stops counting against its stream limit while its query
        // still runs here (the HTTP/2 "rapid reset" attack, CVE-2023-44487): reading stops
        // while as many queries as the limit allows are unanswered, reset or not.
        return unanswered_ >= h2_stream_limit();
    }
    return protocol_ == Protocol::http1 && http1_.size() >= options_.tcp_max_pipelined;
}

template <typename Stream>
std::size_t DohConnection<Stream>::h2_stream_limit() const noexcept {
    return std::max<std::size_t>(kMinH2Streams, options_.tcp_max_pipelined);
}

template <typename Stream>
void DohConnection<Stream>::watch_idle() {
    idle_.wait([self = this->shared_from_this()](const std::error_code& ec) {
        if (ec || self->closed_) {
            return;
        }
        if (self->unanswered_ == 0 && self->writing_.empty() && self->queued_.empty()) {
            log::debug("doh: closing idle connection from {}", self->client_.address.to_text());
            self->close();
        } else {
            self->idle_.touch();  // still working for the client: not idle
            self->watch_idle();
        }
    });
}

template <typename Stream>
void DohConnection<Stream>::read_more() {
    if (reading_ || read_stopped_ || closed_ || pipeline_full()) {
        return;
    }
    reading_ = true;
    chunk_.resize(kStreamReadChunk);
    stream_.async_read_some(asio::buffer(chunk_), [self = this->shared_from_this()](
                                                      const std::error_code& ec, std::size_t n) {
        // A batch, as a DNS stream's read (dns_stream_connection.cpp).
        self->turn_end_.in_batch([&] { self->on_read(ec, n); });
    });
}

template <typename Stream>
void DohConnection<Stream>::on_read(const std::error_code& ec, std::size_t n) {
    reading_ = false;
    if (!ec) {
        input_.insert(input_.end(), chunk_.begin(),
                      chunk_.begin() + static_cast<std::ptrdiff_t>(n));
    }
    if (ec || closed_) {
        read_stopped_ = true;
        close_if_done();
        return;
    }
    const std::uint64_t started_before = queries_started_;
    take_input();
    if (queries_started_ != started_before) {
        // Only a whole request counts as activity: a client trickling bytes, or sending HTTP/2
        // frames that ask nothing, is closed after idle_timeout like an idle one.
        idle_.touch();
    }
    read_more();
    close_if_done();
}

template <typename Stream>
void DohConnection<Stream>::take_input() {
    if (protocol_ == Protocol::unknown) {
        // Plain HTTP: HTTP/2 with prior knowledge starts with the preface, and no HTTP/1.1
        // method starts with "PRI".
        const std::size_t seen = std::min(input_.size(), kH2Preface.size());
        const std::string_view start(reinterpret_cast<const char*>(input_.data()), seen);
        if (seen < 3) {
            return;
        }
        if (start == kH2Preface.substr(0, seen)) {
            start_http2();
        } else {
            protocol_ = Protocol::http1;
        }
    }
    if (protocol_ == Protocol::http1) {
        take_http1_requests();
        return;
    }
    taking_ = true;
    auto received = h2_->receive(input_);
    taking_ = false;
    input_.clear();
    if (!received) {
        log::debug("doh: http/2 error from {}: {}", client_.address.to_text(), received.error());
        read_stopped_ = true;
    }
    flush();
}

template <typename Stream>
void DohConnection<Stream>::take_http1_requests() {
    http::Limits limits;
    limits.max_body_bytes = wire::kMaxMessageSize;
    std::size_t at = 0;
    taking_ = true;
    while (!read_stopped_ && !pipeline_full() && at < input_.size()) {
        http::Request request;
        const std::string_view buffer(reinterpret_cast<const char*>(input_.data()) + at,
                                      input_.size() - at);
        const http::Parsed parsed = http::parse_request(buffer, request, limits);
        if (parsed.state == http::Parsed::State::incomplete) {
            break;
        }
        const std::uint64_t id = http1_next_++;
        http1_.emplace_back();
        if (parsed.state == http::Parsed::State::error) {
            read_stopped_ = true;  // the stream cannot be read further
            answer_http1(id, http::status_of(parsed.error), {}, true);
            break;
        }
        at += parsed.consumed;
        const bool close = !request.keep_alive;
        if (close) {
            read_stopped_ = true;
        }
        const DohRequest doh{request.method, request.path, request.query,
                             request.header("content-type").value_or(std::string_view{}),
                             std::span(reinterpret_cast<const std::uint8_t*>(request.body.data()),
                                       request.body.size())};
        serve(doh, [self = this->shared_from_this(), id, close](
                       int status, std::span<const std::uint8_t> answer) {
            self->answer_http1(id, status, answer, close);
        });
    }
    taking_ = false;
    input_.erase(input_.begin(), input_.begin() + static_cast<std::ptrdiff_t>(at));
    flush();
}

template <typename Stream>
template <typename Respond>
void DohConnection<Stream>::serve(const DohRequest& request, Respond respond) {
    const DohQuery query = doh_query_of(request, options_.doh_path, scratch_);
    if (query.status != 200) {
        respond(query.status, {});
        return;
    }
    ++unanswered_;
    ++queries_started_;
    slot_.set_busy(true);
    const auto handled = path_.handle(query.message, client_, [&] {
        return ReplyFn(
            [self = this->shared_from_this(), respond](std::span<const std::uint8_t> answer) {
                --self->unanswered_;
                respond(answer.empty() ? kDropped : 200, answer);
            });
    });
    if (!handled.deferred) {
        --unanswered_;
        respond(handled.answer.empty() ? kDropped : 200, handled.answer);
    }
}

namespace {

/// Only a DNS answer carries a body; an error says what it is in its status.
std::string http1_response(int status, std::span<const std::uint8_t> answer, bool close) {
    http::Response r;
    r.status = status;
    r.close = close;
    if (status == 200) {
        r.header("Content-Type", std::string(kDnsMessageType));
        r.header("Cache-Control", doh_cache_control(answer));
        r.body.assign(reinterpret_cast<const char*>(answer.data()), answer.size());
    }
    return http::serialize(r);
}

}  // namespace

template <typename Stream>
void DohConnection<Stream>::answer_http1(std::uint64_t id, int status,
                                         std::span<const std::uint8_t> answer, bool close) {
    if (closed_ || id < http1_first_) {
        return;
    }
    Http1Slot& slot = http1_[id - http1_first_];
    slot.bytes = http1_response(status, answer, close);
    slot.ready = true;
    slot.close = close;
    if (!taking_) {
        flush();
        if (!input_.empty()) {
            take_http1_requests();  // requests held back while the pipeline was full
        }
        read_more();
        close_if_done();
    }
}

template <typename Stream>
void DohConnection<Stream>::answer_http2(std::uint32_t stream, int status,
                                         std::span<const std::uint8_t> answer) {
    if (closed_ || !h2_) {
        return;
    }
    const std::string cache_control = status == 200 ? doh_cache_control(answer) : std::string();
    const std::string length = std::to_string(answer.size());
    std::array<http::H2Header, 3> headers{{
        {"content-type", kDnsMessageType},
        {"content-length", length},
        {"cache-control", cache_control},
    }};
    h2_->respond(stream, status,
                 status == 200 ? std::span<const http::H2Header>(headers)
                               : std::span<const http::H2Header>(headers.data() + 1, 1),
                 answer);
    if (!taking_) {  // inside receive() nghttp2 must not be asked for output
        flush();
        read_more();  // reading stopped while the limit of queries was unanswered
        close_if_done();
    }
}

template <typename Stream>
void DohConnection<Stream>::flush() {
    if (closed_) {
        return;
    }
    if (h2_) {
        while (h2_->wants_write()) {
            const auto out = h2_->pending_output();
            if (out.empty()) {
                break;
            }
            queued_.insert(queued_.end(), out.begin(), out.end());
            h2_->consume_output(out.size());
        }
    } else {
        while (!http1_.empty() && http1_.front().ready) {
            const Http1Slot& front = http1_.front();
            queued_.insert(queued_.end(), front.bytes.begin(), front.bytes.end());
            if (front.close) {
                read_stopped_ = true;
            }
            http1_.pop_front();
            ++http1_first_;
        }
    }
    write_next();
}

template <typename Stream>
void DohConnection<Stream>::write_next() {
    if (!writing_.empty() || queued_.empty() || closed_) {
        return;
    }
    writing_.swap(queued_);
    asio::async_write(stream_, asio::buffer(writing_),
                      [self = this->shared_from_this()](const std::error_code& ec, std::size_t) {
                          self->writing_.clear();
                          if (ec) {
                              self->close();
                              return;
                          }
                          self->flush();  // HTTP/2 may have held data back for flow control
                          self->close_if_done();
                      });
}

template <typename Stream>
void DohConnection<Stream>::close_if_done() {
    if (closed_ || unanswered_ != 0 || !writing_.empty() || !queued_.empty()) {
        return;
    }
    if (protocol_ == Protocol::http1 && !http1_.empty()) {
        return;
    }
    slot_.set_busy(false);
    if (read_stopped_ || (h2_ && h2_->finished())) {
        close();
    }
}

template <typename Stream>
void DohConnection<Stream>::close() {
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

template class DohConnection<asio::ip::tcp::socket>;
template class DohConnection<TlsStream>;

}  // namespace moat::server
