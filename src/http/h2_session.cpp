// H2ServerSession on libnghttp2. nghttp2 calls back into Impl (its user_data) from
// nghttp2_session_mem_recv() as frames arrive and from nghttp2_session_mem_send() as frames
// leave; Impl keeps one Stream per open request, keyed by stream id, from the first HEADERS to
// nghttp2's stream-close callback. Nothing else points into a Stream, so a stream the client
// resets simply disappears, and a late respond() finds nothing.
//
// No exception may cross nghttp2's C frames: every callback that can allocate runs under
// guarded(), which keeps the exception and makes nghttp2 fail the receive() in progress.
#include "moat/http/h2_session.hpp"

#include <nghttp2/nghttp2.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <exception>
#include <new>
#include <unordered_map>
#include <utility>
#include <vector>

#include "h2_fields.hpp"
#include "moat/core/ascii.hpp"

namespace moat::http {
namespace {

/// The opaque data of the PING that shutdown() sends to learn the client saw the first GOAWAY.
constexpr std::array<std::uint8_t, 8> kDrainPing{'m', 'o', 'a', 't', 'd', 'r', 'a', 'i'};

/// Response fields the caller may not set: pseudo-headers (only :status, ours), content-length
/// (written from the body) and the connection-specific fields HTTP/2 forbids (RFC 9113 §8.2.2).
bool is_reserved_response_field(std::string_view lowered) noexcept {
    return lowered.empty() || lowered.front() == ':' || lowered == "content-length" ||
           lowered == "connection" || lowered == "keep-alive" || lowered == "proxy-connection" ||
           lowered == "transfer-encoding" || lowered == "upgrade";
}

}  // namespace

class H2ServerSession::Impl {
public:
    Impl(const H2Limits& limits, RequestHandler on_request);
    ~Impl() = default;
    Impl(const Impl&) = delete;
    Impl& operator=(const Impl&) = delete;
    Impl(Impl&&) = delete;
    Impl& operator=(Impl&&) = delete;

    void start();
    tl::expected<void, std::string> receive(std::span<const std::uint8_t> bytes);
    bool respond(std::uint32_t stream_id, int status, std::span<const H2Header> headers,
                 std::span<const std::uint8_t> body);
    void shutdown();
    std::span<const std::uint8_t> pending_output();
    void consume_output(std::size_t bytes) noexcept;
    [[nodiscard]] bool wants_read() const noexcept;
    [[nodiscard]] bool wants_write() const noexcept;
    [[nodiscard]] std::size_t open_streams() const noexcept { return streams_.size(); }

private:
    struct Stream {
        enum class State : std::uint8_t { receiving, awaiting_response, responded };
        State state = State::receiving;
        bool header_overflow = false;  ///< over max_header_list_bytes: answered 431
        bool body_overflow = false;    ///< body or declared length over the cap: answered 413
        std::size_t header_bytes = 0;  ///< the header list as RFC 9113 §6.5.2 counts it
        std::string method;
        std::string path;
        std::string content_type;
        std::optional<std::string> accept;
        std::vector<std::uint8_t> body;
        std::vector<std::uint8_t> response;  ///< the response body the data provider reads
        std::size_t response_sent = 0;       ///< bytes of `response` handed to nghttp2
    };

    struct SessionDeleter {
        void operator()(nghttp2_session* session) const noexcept { nghttp2_session_del(session); }
    };

    int on_header(const nghttp2_frame& frame, std::string_view name, std::string_view value);
    int on_data_chunk(std::int32_t stream_id, std::span<const std::uint8_t> data);
    int on_frame_recv(const nghttp2_frame& frame);
    int on_frame_send(const nghttp2_frame& frame);
    void deliver(std::int32_t stream_id, Stream& stream);
    bool submit(std::int32_t stream_id, Stream& stream, int status,
                std::span<const H2Header> headers, std::span<const std::uint8_t> body);
    void send_final_goaway();
    void fail(std::string message) noexcept;
    void fail_receive(std::ptrdiff_t lib_error);

    static void install_callbacks(nghttp2_session_callbacks* callbacks) noexcept;
    template <typename F>
    static int guarded(void* user_data, F&& body) noexcept;
    static ssize_t read_body(nghttp2_session* session, std::int32_t stream_id, std::uint8_t* buf,
                             std::size_t length, std::uint32_t* data_flags,
                             nghttp2_data_source* source, void* user_data) noexcept;

    H2Limits limits_;
    RequestHandler on_request_;
    std::unordered_map<std::int32_t, Stream> streams_;
    std::vector<std::uint8_t> out_;  ///< pulled from nghttp2, not yet written
    std::size_t out_pos_ = 0;        ///< bytes of out_ already written
    std::string name_scratch_;       ///< lowercased response field names, reused
    std::vector<nghttp2_nv> nv_scratch_;
    std::exception_ptr callback_error_;
    std::string error_;
    bool started_ = false;
    bool failed_ = false;  ///< the connection is dead: no more reading, receive() fails
    bool mute_ = false;    ///< nothing more is pulled from nghttp2 (bad preface, send error)
    bool draining_ = false;
    bool final_goaway_ = false;
    // Last, so it is destroyed first, before anything nghttp2's callbacks could reach.
    std::unique_ptr<nghttp2_session, SessionDeleter> session_;
};

H2ServerSession::Impl::Impl(const H2Limits& limits, RequestHandler on_request)
    : limits_(limits), on_request_(std::move(on_request)) {
    nghttp2_session_callbacks* raw_callbacks = nullptr;
    if (nghttp2_session_callbacks_new(&raw_callbacks) != 0) {
        throw std::bad_alloc();
    }
    install_callbacks(raw_callbacks);
    nghttp2_session* session = nullptr;
    const int rv = nghttp2_session_server_new(&session, raw_callbacks, this);
    nghttp2_session_callbacks_del(raw_callbacks);  // the session keeps a copy
    if (rv != 0) {
        throw std::bad_alloc();
    }
    session_.reset(session);
}

template <typename F>
int H2ServerSession::Impl::guarded(void* user_data, F&& body) noexcept {
    auto& self = *static_cast<Impl*>(user_data);
    try {
        return std::forward<F>(body)(self);
    } catch (...) {
        self.callback_error_ = std::current_exception();
    }
    return NGHTTP2_ERR_CALLBACK_FAILURE;
}

void H2ServerSession::Impl::install_callbacks(nghttp2_session_callbacks* callbacks) noexcept {
    nghttp2_session_callbacks_set_on_begin_headers_callback(
        callbacks, [](nghttp2_session*, const nghttp2_frame* frame, void* user_data) {
            return guarded(user_data, [frame](Impl& self) {
                if (frame->hd.type == NGHTTP2_HEADERS &&
                    frame->headers.cat == NGHTTP2_HCAT_REQUEST) {
                    self.streams_.try_emplace(frame->hd.stream_id);
                }
                return 0;
            });
        });
    nghttp2_session_callbacks_set_on_header_callback(
        callbacks, [](nghttp2_session*, const nghttp2_frame* frame, const std::uint8_t* name,
                      std::size_t name_size, const std::uint8_t* value, std::size_t value_size,
                      std::uint8_t /*flags*/, void* user_data) {
            return guarded(user_data, [&](Impl& self) {
                return self.on_header(*frame, h2::as_text(name, name_size),
                                      h2::as_text(value, value_size));
            });
        });
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(
        callbacks, [](nghttp2_session*, std::uint8_t /*flags*/, std::int32_t stream_id,
                      const std::uint8_t* data, std::size_t size, void* user_data) {
            return guarded(user_data, [&](Impl& self) {
                return self.on_data_chunk(stream_id, std::span(data, size));
            });
        });
    nghttp2_session_callbacks_set_on_frame_recv_callback(
        callbacks, [](nghttp2_session*, const nghttp2_frame* frame, void* user_data) {
            return guarded(user_data, [frame](Impl& self) { return self.on_frame_recv(*frame); });
        });
    nghttp2_session_callbacks_set_on_frame_send_callback(
        callbacks, [](nghttp2_session*, const nghttp2_frame* frame, void* user_data) {
            return guarded(user_data, [frame](Impl& self) { return self.on_frame_send(*frame); });
        });
    nghttp2_session_callbacks_set_on_stream_close_callback(
        callbacks, [](nghttp2_session*, std::int32_t stream_id, std::uint32_t /*error_code*/,
                      void* user_data) {
            static_cast<Impl*>(user_data)->streams_.erase(stream_id);
            return 0;
        });
}

void H2ServerSession::Impl::start() {
    if (started_) {
        return;
    }
    started_ = true;
    const std::array<nghttp2_settings_entry, 2> settings{{
        {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, limits_.max_concurrent_streams},
        {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, limits_.max_header_list_bytes},
    }};
    const int rv = nghttp2_submit_settings(session_.get(), NGHTTP2_FLAG_NONE, settings.data(),
                                           settings.size());
    if (rv != 0) {
        // Out of memory or a limit HTTP/2 cannot express: no preface, so no connection.
        fail(std::string("h2: cannot queue SETTINGS: ") + nghttp2_strerror(rv));
        mute_ = true;
    }
}

tl::expected<void, std::string> H2ServerSession::Impl::receive(
    std::span<const std::uint8_t> bytes) {
    start();
    if (failed_) {
        return tl::unexpected(error_);
    }
    const ssize_t n = nghttp2_session_mem_recv(session_.get(), bytes.data(), bytes.size());
    if (n >= 0) {
        return {};
    }
    fail_receive(n);
    return tl::unexpected(error_);
}

void H2ServerSession::Impl::fail_receive(std::ptrdiff_t lib_error) {
    const auto code = static_cast<int>(lib_error);
    std::string message = std::string("h2: ") + nghttp2_strerror(code);
    if (callback_error_) {
        try {
            std::rethrow_exception(std::exchange(callback_error_, nullptr));
        } catch (const std::exception& e) {
            message = std::string("h2: request handling failed: ") + e.what();
        } catch (...) {
            message = "h2: request handling failed";
        }
    }
    fail(std::move(message));
    if (code == NGHTTP2_ERR_BAD_CLIENT_MAGIC) {
        mute_ = true;  // not an HTTP/2 client: a GOAWAY would mean nothing to it
        return;
    }
    const std::uint32_t h2_error = code == NGHTTP2_ERR_FLOODED ? NGHTTP2_ENHANCE_YOUR_CALM
                                   : code == NGHTTP2_ERR_CALLBACK_FAILURE ? NGHTTP2_INTERNAL_ERROR
                                                                          : NGHTTP2_PROTOCOL_ERROR;
    if (nghttp2_session_terminate_session(session_.get(), h2_error) != 0) {
        mute_ = true;
    }
}

void H2ServerSession::Impl::fail(std::string message) noexcept {
    if (!failed_) {
        failed_ = true;
        error_ = std::move(message);
    }
}

int H2ServerSession::Impl::on_header(const nghttp2_frame& frame, std::string_view name,
                                     std::string_view value) {
    // Trailers (a second HEADERS) are checked by nghttp2 and of no use to DoH.
    if (frame.hd.type != NGHTTP2_HEADERS || frame.headers.cat != NGHTTP2_HCAT_REQUEST) {
        return 0;
    }
    const auto it = streams_.find(frame.hd.stream_id);
    if (it == streams_.end()) {
        return 0;
    }
    Stream& stream = it->second;
    stream.header_bytes += name.size() + value.size() + h2::kFieldOverhead;
    if (stream.header_bytes > limits_.max_header_list_bytes) {
        stream.header_overflow = true;
    }
    if (stream.header_overflow) {
        return 0;
    }
    // nghttp2 has checked the names are lowercase and the pseudo-headers well-formed.
    if (name == ":method") {
        stream.method = value;
    } else if (name == ":path") {
        stream.path = value;
    } else if (name == "content-type") {
        stream.content_type = value;
    } else if (name == "accept") {
        if (!stream.accept) {
            stream.accept = value;
        }
    } else if (name == "content-length") {
        // nghttp2 has checked the syntax; a declared length over the cap is refused before
        // the body is read.
        std::size_t length = 0;
        const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), length);
        if (ec != std::errc() || length > limits_.max_request_body_bytes) {
            stream.body_overflow = true;
        }
    }
    return 0;
}

int H2ServerSession::Impl::on_data_chunk(std::int32_t stream_id,
                                         std::span<const std::uint8_t> data) {
    const auto it = streams_.find(stream_id);
    if (it == streams_.end()) {
        return 0;
    }
    Stream& stream = it->second;
    if (stream.state != Stream::State::receiving || stream.body_overflow) {
        return 0;  // answered already; what still arrives is dropped
    }
    if (data.size() > limits_.max_request_body_bytes - stream.body.size()) {
        stream.body_overflow = true;
        std::vector<std::uint8_t>().swap(stream.body);
        return 0;
    }
    stream.body.insert(stream.body.end(), data.begin(), data.end());
    return 0;
}

int H2ServerSession::Impl::on_frame_recv(const nghttp2_frame& frame) {
    if (frame.hd.type == NGHTTP2_PING) {
        if ((frame.hd.flags & NGHTTP2_FLAG_ACK) != 0 && draining_ &&
            std::equal(kDrainPing.begin(), kDrainPing.end(), frame.ping.opaque_data)) {
            send_final_goaway();
        }
        return 0;
    }
    if (frame.hd.type != NGHTTP2_HEADERS && frame.hd.type != NGHTTP2_DATA) {
        return 0;
    }
    const std::int32_t stream_id = frame.hd.stream_id;
    const auto it = streams_.find(stream_id);
    if (it == streams_.end() || it->second.state != Stream::State::receiving) {
        return 0;
    }
    Stream& stream = it->second;
    if (stream.header_overflow || stream.body_overflow) {
        // Answered now, not at END_STREAM: the client need not send what will not be read.
        submit(stream_id, stream, stream.header_overflow ? 431 : 413, {}, {});
        return 0;
    }
    if ((frame.hd.flags & NGHTTP2_FLAG_END_STREAM) != 0) {
        deliver(stream_id, stream);
    }
    return 0;
}

void H2ServerSession::Impl::deliver(std::int32_t stream_id, Stream& stream) {
    stream.state = Stream::State::awaiting_response;
    H2Request request;
    request.method = stream.method;
    request.path = stream.path;
    request.content_type = stream.content_type;
    if (stream.accept) {
        request.accept = *stream.accept;
    }
    request.body = stream.body;
    on_request_(static_cast<std::uint32_t>(stream_id), request);
    // The handler may not close streams, so `stream` is still there; its body is not needed
    // while the answer is awaited (perhaps for a while, from an upstream).
    std::vector<std::uint8_t>().swap(stream.body);
}

int H2ServerSession::Impl::on_frame_send(const nghttp2_frame& frame) {
    const bool ends_stream = (frame.hd.type == NGHTTP2_HEADERS || frame.hd.type == NGHTTP2_DATA) &&
                             (frame.hd.flags & NGHTTP2_FLAG_END_STREAM) != 0;
    if (ends_stream &&
        nghttp2_session_get_stream_remote_close(session_.get(), frame.hd.stream_id) == 0) {
        // A complete answer to a request still arriving (413, 431): RFC 9113 §8.1 lets the
        // server stop it with NO_ERROR. Queued only now, so it cannot overtake the answer.
        return nghttp2_submit_rst_stream(session_.get(), NGHTTP2_FLAG_NONE, frame.hd.stream_id,
                                         NGHTTP2_NO_ERROR);
    }
    if (frame.hd.type == NGHTTP2_GOAWAY && frame.goaway.error_code != NGHTTP2_NO_ERROR) {
        // nghttp2 found a connection error while reading and now ends the connection.
        fail(std::string("h2: connection error: ") +
             nghttp2_http2_strerror(frame.goaway.error_code));
    }
    return 0;
}

bool H2ServerSession::Impl::respond(std::uint32_t stream_id, int status,
                                    std::span<const H2Header> headers,
                                    std::span<const std::uint8_t> body) {
    start();
    if (failed_ || status < 200 || status > 599 || stream_id > h2::kMaxStreamId) {
        return false;
    }
    const auto it = streams_.find(static_cast<std::int32_t>(stream_id));
    if (it == streams_.end() || it->second.state != Stream::State::awaiting_response) {
        return false;
    }
    return submit(it->first, it->second, status, headers, body);
}

bool H2ServerSession::Impl::submit(std::int32_t stream_id, Stream& stream, int status,
                                   std::span<const H2Header> headers,
                                   std::span<const std::uint8_t> body) {
    std::array<char, 3> status_text{};
    std::to_chars(status_text.data(), status_text.data() + status_text.size(), status);
    const bool has_content = status != 204 && status != 304;
    std::array<char, 20> length_text{};
    const char* length_end =
        std::to_chars(length_text.data(), length_text.data() + length_text.size(), body.size()).ptr;

    // All names go into the scratch string before any view of it is taken, so none dangles.
    name_scratch_.clear();
    for (const H2Header& header : headers) {
        for (const char c : header.name) {
            name_scratch_.push_back(static_cast<char>(ascii_lower(static_cast<std::uint8_t>(c))));
        }
    }
    nv_scratch_.clear();
    nv_scratch_.push_back(h2::make_nv(":status", std::string_view(status_text.data(), 3)));
    std::size_t offset = 0;
    for (const H2Header& header : headers) {
        const std::string_view name(name_scratch_.data() + offset, header.name.size());
        offset += header.name.size();
        if (!is_reserved_response_field(name)) {
            nv_scratch_.push_back(h2::make_nv(name, header.value));
        }
    }
    if (has_content) {
        nv_scratch_.push_back(h2::make_nv(
            "content-length",
            std::string_view(length_text.data(),
                             static_cast<std::size_t>(length_end - length_text.data()))));
    }
    const bool send_body = has_content && !body.empty() && stream.method != "HEAD";
    if (send_body) {
        stream.response.assign(body.begin(), body.end());
    } else {
        stream.response.clear();
    }
    stream.response_sent = 0;
    nghttp2_data_provider provider{};
    provider.read_callback = &Impl::read_body;
    const int rv = nghttp2_submit_response(session_.get(), stream_id, nv_scratch_.data(),
                                           nv_scratch_.size(), send_body ? &provider : nullptr);
    if (rv != 0) {
        stream.response.clear();
        return false;
    }
    stream.state = Stream::State::responded;
    return true;
}

ssize_t H2ServerSession::Impl::read_body(nghttp2_session* /*session*/, std::int32_t stream_id,
                                         std::uint8_t* buf, std::size_t length,
                                         std::uint32_t* data_flags, nghttp2_data_source* /*source*/,
                                         void* user_data) noexcept {
    auto& self = *static_cast<Impl*>(user_data);
    const auto it = self.streams_.find(stream_id);
    if (it == self.streams_.end()) {
        return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;  // resets that stream only
    }
    Stream& stream = it->second;
    const std::size_t n = std::min(length, stream.response.size() - stream.response_sent);
    std::memcpy(buf, stream.response.data() + stream.response_sent, n);
    stream.response_sent += n;
    if (stream.response_sent == stream.response.size()) {
        *data_flags |= NGHTTP2_DATA_FLAG_EOF;
    }
    return static_cast<ssize_t>(n);
}

void H2ServerSession::Impl::shutdown() {
    start();
    if (draining_ || failed_) {
        return;
    }
    draining_ = true;
    if (nghttp2_submit_shutdown_notice(session_.get()) != 0 ||
        nghttp2_submit_ping(session_.get(), NGHTTP2_FLAG_NONE, kDrainPing.data()) != 0) {
        send_final_goaway();  // out of memory: skip the round trip
    }
}

void H2ServerSession::Impl::send_final_goaway() {
    if (final_goaway_) {
        return;
    }
    final_goaway_ = true;
    // The client has seen the first GOAWAY, so it opens no more streams; any above the last one
    // processed are refused by nghttp2, and RFC 9113 §6.8 lets the client retry them elsewhere.
    const int rv = nghttp2_submit_goaway(session_.get(), NGHTTP2_FLAG_NONE,
                                         nghttp2_session_get_last_proc_stream_id(session_.get()),
                                         NGHTTP2_NO_ERROR, nullptr, 0);
    if (rv != 0) {
        fail("h2: cannot queue GOAWAY");
        mute_ = true;
    }
}

std::span<const std::uint8_t> H2ServerSession::Impl::pending_output() {
    // The caller is done with the previous view: drop what it wrote.
    out_.erase(out_.begin(), out_.begin() + static_cast<std::ptrdiff_t>(out_pos_));
    out_pos_ = 0;
    while (!mute_ && out_.size() < h2::kOutputHighWater) {
        const std::uint8_t* data = nullptr;
        const ssize_t n = nghttp2_session_mem_send(session_.get(), &data);
        if (n < 0) {
            fail(std::string("h2: ") + nghttp2_strerror(static_cast<int>(n)));
            mute_ = true;
            break;
        }
        if (n == 0) {
            break;
        }
        out_.insert(out_.end(), data, data + n);
    }
    return out_;
}

void H2ServerSession::Impl::consume_output(std::size_t bytes) noexcept {
    out_pos_ += std::min(bytes, out_.size() - out_pos_);
}

bool H2ServerSession::Impl::wants_read() const noexcept {
    return !failed_ && nghttp2_session_want_read(session_.get()) != 0;
}

bool H2ServerSession::Impl::wants_write() const noexcept {
    return out_pos_ < out_.size() || (!mute_ && nghttp2_session_want_write(session_.get()) != 0);
}

// ---- H2ServerSession: forwards to Impl ----

H2ServerSession::H2ServerSession(const H2Limits& limits, RequestHandler on_request)
    : impl_(std::make_unique<Impl>(limits, std::move(on_request))) {}

H2ServerSession::~H2ServerSession() = default;
H2ServerSession::H2ServerSession(H2ServerSession&&) noexcept = default;
H2ServerSession& H2ServerSession::operator=(H2ServerSession&&) noexcept = default;

void H2ServerSession::start() { impl_->start(); }

tl::expected<void, std::string> H2ServerSession::receive(std::span<const std::uint8_t> bytes) {
    return impl_->receive(bytes);
}

bool H2ServerSession::respond(std::uint32_t stream_id, int status,
                              std::span<const H2Header> headers,
                              std::span<const std::uint8_t> body) {
    return impl_->respond(stream_id, status, headers, body);
}

void H2ServerSession::shutdown() { impl_->shutdown(); }

std::span<const std::uint8_t> H2ServerSession::pending_output() { return impl_->pending_output(); }

void H2ServerSession::consume_output(std::size_t bytes) noexcept { impl_->consume_output(bytes); }

bool H2ServerSession::wants_read() const noexcept { return impl_->wants_read(); }

bool H2ServerSession::wants_write() const noexcept { return impl_->wants_write(); }

bool H2ServerSession::finished() const noexcept { return !wants_read() && !wants_write(); }

std::size_t H2ServerSession::open_streams() const noexcept { return impl_->open_streams(); }

}  // namespace moat::http
