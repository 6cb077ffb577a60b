// H2ClientSession on libnghttp2. nghttp2 calls back into Impl (its user_data) from
// nghttp2_session_mem_recv() as frames arrive and from nghttp2_session_mem_send() as frames
// leave; Impl keeps one Stream per request not reported yet, keyed by stream id. finish() takes
// the Stream out of the map before it calls the handler, so a stream is reported once, and the
// handler may open new streams meanwhile.
//
// Where a stream ends decides when it is reported. Ends seen while receiving (a response, a
// server RST_STREAM, a GOAWAY, a malformed frame, a limit) are reported at once. nghttp2 also
// closes streams while sending (when the RST_STREAM it queued for a malformed response leaves,
// or a request it may no longer start is dropped): those are only marked, and reported at the
// end of the next receive() or by fail_all(), so the handler never runs from pending_output().
// A response that ends badly without a callback (its END_STREAM contradicts content-length) is
// found by the sweep at the end of receive(): nghttp2 shut the stream's read side, yet no
// complete response was seen.
//
// No exception may cross nghttp2's C frames: every callback that can allocate or call the
// handler runs under guarded(), which keeps the exception and makes nghttp2 fail the receive().
#include "moat/http/h2_client_session.hpp"

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

/// Request fields the caller may not set: pseudo-headers (ours), content-length (written from
/// the body), host (:authority says it), te and the connection-specific fields HTTP/2 forbids
/// (RFC 9113 §8.2.2).
bool is_reserved_request_field(std::string_view lowered) noexcept {
    return lowered.empty() || lowered.front() == ':' || lowered == "content-length" ||
           lowered == "host" || lowered == "te" || lowered == "connection" ||
           lowered == "keep-alive" || lowered == "proxy-connection" ||
           lowered == "transfer-encoding" || lowered == "upgrade";
}

/// Why a stream nghttp2 closed before its response was complete failed.
std::string close_message(std::uint32_t code) {
    if (code == NGHTTP2_REFUSED_STREAM) {
        return "h2: stream refused by the server (not processed)";
    }
    if (code == NGHTTP2_NO_ERROR) {
        return "h2: stream closed before the response was complete";
    }
    return std::string("h2: stream reset: ") + nghttp2_http2_strerror(code);
}

}  // namespace

class H2ClientSession::Impl {
public:
    Impl(const H2ClientLimits& limits, ResponseHandler on_response);
    ~Impl();
    Impl(const Impl&) = delete;
    Impl& operator=(const Impl&) = delete;
    Impl(Impl&&) = delete;
    Impl& operator=(Impl&&) = delete;

    void start();
    std::optional<std::uint32_t> request(std::string_view method, std::string_view authority,
                                         std::string_view path, std::span<const H2Header> headers,
                                         std::span<const std::uint8_t> body);
    tl::expected<void, std::string> receive(std::span<const std::uint8_t> bytes);
    void fail_all(std::string_view reason);
    std::span<const std::uint8_t> pending_output();
    void consume_output(std::size_t bytes) noexcept {
        out_pos_ += std::min(bytes, out_.size() - out_pos_);
    }
    [[nodiscard]] bool wants_read() const noexcept {
        return !failed_ && nghttp2_session_want_read(session_.get()) != 0;
    }
    [[nodiscard]] bool wants_write() const noexcept {
        return out_pos_ < out_.size() ||
               (!mute_ && nghttp2_session_want_write(session_.get()) != 0);
    }
    [[nodiscard]] bool can_request() const noexcept;
    [[nodiscard]] std::size_t open_streams() const noexcept { return streams_.size(); }
    [[nodiscard]] bool going_away() const noexcept { return going_away_; }

private:
    struct Stream {
        std::vector<std::uint8_t> request_body;  ///< what the data provider reads
        std::size_t request_sent = 0;            ///< bytes of request_body handed to nghttp2
        bool sent = false;                       ///< its HEADERS left nghttp2
        bool in_trailers = false;                ///< the block being read follows the final one
        std::string failure;                     ///< over a limit: why it is reset and failed
        std::size_t header_bytes = 0;            ///< of the block being read, as §6.5.2 counts
        int status = 0;                          ///< 1xx until the final response; 0 before any
        std::string content_type;
        std::optional<std::string> cache_control;
        std::vector<std::uint8_t> body;
        std::optional<std::uint32_t> closed_code;  ///< nghttp2 closed it while sending
    };
    using StreamMap = std::unordered_map<std::int32_t, Stream>;

    struct SessionDeleter {
        void operator()(nghttp2_session* session) const noexcept { nghttp2_session_del(session); }
    };

    int on_begin_headers(const nghttp2_frame& frame);
    int on_header(const nghttp2_frame& frame, std::string_view name, std::string_view value);
    int on_data_chunk(std::int32_t stream_id, std::span<const std::uint8_t> data);
    int on_frame_recv(const nghttp2_frame& frame);
    int on_frame_send(const nghttp2_frame& frame);
    int on_stream_close(std::int32_t stream_id, std::uint32_t code);
    int on_invalid_frame(const nghttp2_frame& frame, int lib_error);
    void on_goaway(std::int32_t last_stream_id);
    void finish(StreamMap::iterator it, std::string_view error, bool cancel);
    template <typename Reason>
    void fail_streams(Reason reason);
    [[nodiscard]] std::string body_over_cap() const {
        return "h2: response body over " + std::to_string(limits_.max_response_body_bytes) +
               " bytes";
    }
    void fail(std::string message) noexcept;
    void fail_receive(std::ptrdiff_t lib_error);

    static void install_callbacks(nghttp2_session_callbacks* callbacks) noexcept;
    template <typename F>
    static int guarded(void* user_data, F&& body) noexcept;
    static ssize_t read_body(nghttp2_session* session, std::int32_t stream_id, std::uint8_t* buf,
                             std::size_t length, std::uint32_t* data_flags,
                             nghttp2_data_source* source, void* user_data) noexcept;

    H2ClientLimits limits_;
    ResponseHandler on_response_;
    StreamMap streams_;
    std::vector<std::uint8_t> out_;  ///< pulled from nghttp2, not yet written
    std::size_t out_pos_ = 0;        ///< bytes of out_ already written
    std::string name_scratch_;       ///< lowercased request field names, reused
    std::vector<nghttp2_nv> nv_scratch_;
    std::vector<std::int32_t> id_scratch_;  ///< streams to finish, collected before finishing
    std::string connection_error_;          ///< nghttp2's word on the last connection error
    std::exception_ptr callback_error_;
    std::string error_;
    bool started_ = false;
    bool in_receive_ = false;  ///< inside nghttp2_session_mem_recv(): the handler may run
    bool going_away_ = false;  ///< the server sent a GOAWAY
    bool failed_ = false;      ///< the connection is dead: no new streams, receive() fails
    bool mute_ = false;        ///< nothing more is pulled from nghttp2
    // Last, so it is destroyed first, before anything nghttp2's callbacks could reach.
    std::unique_ptr<nghttp2_session, SessionDeleter> session_;
};

H2ClientSession::Impl::Impl(const H2ClientLimits& limits, ResponseHandler on_response)
    : limits_(limits), on_response_(std::move(on_response)) {
    nghttp2_session_callbacks* raw_callbacks = nullptr;
    if (nghttp2_session_callbacks_new(&raw_callbacks) != 0) {
        throw std::bad_alloc();
    }
    install_callbacks(raw_callbacks);
    nghttp2_session* session = nullptr;
    const int rv = nghttp2_session_client_new(&session, raw_callbacks, this);
    nghttp2_session_callbacks_del(raw_callbacks);  // the session keeps a copy
    if (rv != 0) {
        throw std::bad_alloc();
    }
    session_.reset(session);
}

H2ClientSession::Impl::~Impl() {
    // The handler never runs from here: forget the streams before nghttp2 lets go of its own.
    streams_.clear();
    session_.reset();
}

template <typename F>
int H2ClientSession::Impl::guarded(void* user_data, F&& body) noexcept {
    auto& self = *static_cast<Impl*>(user_data);
    try {
        return std::forward<F>(body)(self);
    } catch (...) {
        self.callback_error_ = std::current_exception();
    }
    return NGHTTP2_ERR_CALLBACK_FAILURE;
}

void H2ClientSession::Impl::install_callbacks(nghttp2_session_callbacks* callbacks) noexcept {
    nghttp2_session_callbacks_set_on_begin_headers_callback(
        callbacks, [](nghttp2_session*, const nghttp2_frame* frame, void* user_data) {
            return guarded(user_data,
                           [frame](Impl& self) { return self.on_begin_headers(*frame); });
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
        callbacks,
        [](nghttp2_session*, std::int32_t stream_id, std::uint32_t code, void* user_data) {
            return guarded(user_data,
                           [&](Impl& self) { return self.on_stream_close(stream_id, code); });
        });
    nghttp2_session_callbacks_set_on_invalid_frame_recv_callback(
        callbacks,
        [](nghttp2_session*, const nghttp2_frame* frame, int lib_error, void* user_data) {
            return guarded(user_data,
                           [&](Impl& self) { return self.on_invalid_frame(*frame, lib_error); });
        });
    // nghttp2 explains a connection error it is about to answer with GOAWAY here; receive()
    // reports that text.
    nghttp2_session_callbacks_set_error_callback2(
        callbacks, [](nghttp2_session*, int /*lib_error*/, const char* message, std::size_t size,
                      void* user_data) {
            return guarded(user_data, [&](Impl& self) {
                self.connection_error_.assign(message, size);
                return 0;
            });
        });
}

void H2ClientSession::Impl::start() {
    if (started_) {
        return;
    }
    started_ = true;
    // nghttp2 writes the client magic ahead of these SETTINGS.
    const std::array<nghttp2_settings_entry, 2> settings{{
        {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
        {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, limits_.max_header_list_bytes},
    }};
    const int rv = nghttp2_submit_settings(session_.get(), NGHTTP2_FLAG_NONE, settings.data(),
                                           settings.size());
    if (rv != 0) {
        fail(std::string("h2: cannot queue SETTINGS: ") + nghttp2_strerror(rv));
        mute_ = true;
    }
}

bool H2ClientSession::Impl::can_request() const noexcept {
    if (failed_ || going_away_ || nghttp2_session_check_request_allowed(session_.get()) == 0) {
        return false;
    }
    const std::uint32_t server_limit = nghttp2_session_get_remote_settings(
        session_.get(), NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS);
    return streams_.size() < std::min(limits_.max_concurrent_streams, server_limit);
}

std::optional<std::uint32_t> H2ClientSession::Impl::request(std::string_view method,
                                                            std::string_view authority,
                                                            std::string_view path,
                                                            std::span<const H2Header> headers,
                                                            std::span<const std::uint8_t> body) {
    start();
    if (!can_request()) {
        return std::nullopt;
    }
    std::array<char, 20> length_text{};
    const char* length_end =
        std::to_chars(length_text.data(), length_text.data() + length_text.size(), body.size()).ptr;

    // Room for every lowercased name first: the scratch string never moves once views of it
    // are taken.
    std::size_t names = 0;
    for (const H2Header& header : headers) {
        names += header.name.size();
    }
    name_scratch_.clear();
    name_scratch_.reserve(names);
    nv_scratch_.assign({h2::make_nv(":method", method), h2::make_nv(":scheme", "https"),
                        h2::make_nv(":authority", authority), h2::make_nv(":path", path)});
    for (const H2Header& header : headers) {
        const std::size_t from = name_scratch_.size();
        for (const char c : header.name) {
            name_scratch_.push_back(static_cast<char>(ascii_lower(static_cast<std::uint8_t>(c))));
        }
        const std::string_view name(name_scratch_.data() + from, header.name.size());
        if (!is_reserved_request_field(name)) {
            nv_scratch_.push_back(h2::make_nv(name, header.value));
        }
    }
    if (!body.empty()) {
        nv_scratch_.push_back(h2::make_nv(
            "content-length",
            std::string_view(length_text.data(),
                             static_cast<std::size_t>(length_end - length_text.data()))));
    }
    Stream stream;
    stream.request_body.assign(body.begin(), body.end());
    nghttp2_data_provider provider{};
    provider.read_callback = &Impl::read_body;
    // The provider is read only by mem_send, once the stream is in the map below.
    const std::int32_t id =
        nghttp2_submit_request(session_.get(), nullptr, nv_scratch_.data(), nv_scratch_.size(),
                               body.empty() ? nullptr : &provider, nullptr);
    if (id < 0) {
        return std::nullopt;  // out of memory or of stream ids
    }
    streams_.try_emplace(id, std::move(stream));
    return static_cast<std::uint32_t>(id);
}

ssize_t H2ClientSession::Impl::read_body(nghttp2_session* /*session*/, std::int32_t stream_id,
                                         std::uint8_t* buf, std::size_t length,
                                         std::uint32_t* data_flags, nghttp2_data_source* /*source*/,
                                         void* user_data) noexcept {
    auto& self = *static_cast<Impl*>(user_data);
    const auto it = self.streams_.find(stream_id);
    if (it == self.streams_.end()) {
        return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;  // reported already: resets that stream
    }
    Stream& stream = it->second;
    const std::size_t n = std::min(length, stream.request_body.size() - stream.request_sent);
    std::memcpy(buf, stream.request_body.data() + stream.request_sent, n);
    stream.request_sent += n;
    if (stream.request_sent == stream.request_body.size()) {
        *data_flags |= NGHTTP2_DATA_FLAG_EOF;
    }
    return static_cast<ssize_t>(n);
}

tl::expected<void, std::string> H2ClientSession::Impl::receive(
    std::span<const std::uint8_t> bytes) {
    start();
    if (failed_) {
        return tl::unexpected(error_);
    }
    in_receive_ = true;
    const ssize_t n = nghttp2_session_mem_recv(session_.get(), bytes.data(), bytes.size());
    in_receive_ = false;
    if (n < 0) {
        fail_receive(n);
        return tl::unexpected(error_);
    }
    if (!going_away_ && nghttp2_session_check_request_allowed(session_.get()) == 0 &&
        nghttp2_session_get_next_stream_id(session_.get()) <= h2::kMaxStreamId) {
        // nghttp2 allows no new request, yet the server sent no GOAWAY and stream ids are left:
        // it queued a GOAWAY of its own for a connection error. What is open waits for
        // fail_all().
        fail("h2: connection error: " +
             (connection_error_.empty() ? std::string("protocol error") : connection_error_));
        return tl::unexpected(error_);
    }
    try {
        fail_streams([this](std::int32_t id, const Stream& stream) {
            if (stream.closed_code) {
                return close_message(*stream.closed_code);
            }
            // The server ended the stream, yet no complete response was seen: nghttp2 found it
            // malformed (content-length against the DATA) and resets it.
            const bool ended = nghttp2_session_get_stream_remote_close(session_.get(), id) == 1;
            return ended ? std::string("h2: malformed response: ended early") : std::string();
        });
    } catch (...) {
        callback_error_ = std::current_exception();
        fail_receive(NGHTTP2_ERR_CALLBACK_FAILURE);
        return tl::unexpected(error_);
    }
    return {};
}

void H2ClientSession::Impl::fail_receive(std::ptrdiff_t lib_error) {
    const auto code = static_cast<int>(lib_error);
    std::string message = std::string("h2: ") + nghttp2_strerror(code);
    if (callback_error_) {
        try {
            std::rethrow_exception(std::exchange(callback_error_, nullptr));
        } catch (const std::exception& e) {
            message = std::string("h2: response handling failed: ") + e.what();
        } catch (...) {
            message = "h2: response handling failed";
        }
    }
    fail(std::move(message));
    const std::uint32_t h2_error = code == NGHTTP2_ERR_FLOODED ? NGHTTP2_ENHANCE_YOUR_CALM
                                   : code == NGHTTP2_ERR_CALLBACK_FAILURE ? NGHTTP2_INTERNAL_ERROR
                                                                          : NGHTTP2_PROTOCOL_ERROR;
    if (nghttp2_session_terminate_session(session_.get(), h2_error) != 0) {
        mute_ = true;
    }
}

void H2ClientSession::Impl::fail(std::string message) noexcept {
    if (!failed_) {
        failed_ = true;
        error_ = std::move(message);
    }
}

int H2ClientSession::Impl::on_begin_headers(const nghttp2_frame& frame) {
    const auto it = streams_.find(frame.hd.stream_id);
    if (frame.hd.type != NGHTTP2_HEADERS || it == streams_.end()) {
        return 0;
    }
    // A new header block: a 1xx response, the final one, or trailers after it (nghttp2 has
    // checked which may come when). Only the final response's fields are kept.
    Stream& stream = it->second;
    stream.header_bytes = 0;
    stream.in_trailers = stream.status >= 200;
    if (!stream.in_trailers) {
        stream.status = 0;
        stream.content_type.clear();
        stream.cache_control.reset();
    }
    return 0;
}

int H2ClientSession::Impl::on_header(const nghttp2_frame& frame, std::string_view name,
                                     std::string_view value) {
    const auto it = streams_.find(frame.hd.stream_id);
    if (frame.hd.type != NGHTTP2_HEADERS || it == streams_.end()) {
        return 0;
    }
    Stream& stream = it->second;
    stream.header_bytes += name.size() + value.size() + h2::kFieldOverhead;
    if (stream.header_bytes > limits_.max_header_list_bytes && stream.failure.empty()) {
        stream.failure = "h2: response header list over " +
                         std::to_string(limits_.max_header_list_bytes) + " bytes";
    }
    if (!stream.failure.empty() || stream.in_trailers) {
        return 0;
    }
    // nghttp2 has checked the names are lowercase, :status is three digits and the
    // content-length syntax.
    if (name == ":status") {
        std::from_chars(value.data(), value.data() + value.size(), stream.status);
    } else if (name == "content-type") {
        if (stream.content_type.empty()) {
            stream.content_type = value;
        }
    } else if (name == "cache-control") {
        // A list field: several lines mean one value joined by commas (RFC 9110 §5.3).
        if (stream.cache_control) {
            stream.cache_control->append(", ").append(value);
        } else {
            stream.cache_control = std::string(value);
        }
    } else if (name == "content-length") {
        std::size_t length = 0;
        const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), length);
        if (ec != std::errc() || length > limits_.max_response_body_bytes) {
            stream.failure = body_over_cap();  // refused before the body is read
        }
    }
    return 0;
}

int H2ClientSession::Impl::on_data_chunk(std::int32_t stream_id,
                                         std::span<const std::uint8_t> data) {
    const auto it = streams_.find(stream_id);
    if (it == streams_.end() || !it->second.failure.empty()) {
        return 0;
    }
    Stream& stream = it->second;
    if (data.size() > limits_.max_response_body_bytes - stream.body.size()) {
        stream.failure = body_over_cap();  // failed at the end of this DATA frame
        std::vector<std::uint8_t>().swap(stream.body);
        return 0;
    }
    stream.body.insert(stream.body.end(), data.begin(), data.end());
    return 0;
}

int H2ClientSession::Impl::on_frame_recv(const nghttp2_frame& frame) {
    if (frame.hd.type == NGHTTP2_GOAWAY) {
        on_goaway(frame.goaway.last_stream_id);
        return 0;
    }
    if (frame.hd.type != NGHTTP2_HEADERS && frame.hd.type != NGHTTP2_DATA) {
        return 0;
    }
    const std::int32_t stream_id = frame.hd.stream_id;
    const auto it = streams_.find(stream_id);
    if (it == streams_.end()) {
        return 0;
    }
    const Stream& stream = it->second;
    if (!stream.failure.empty()) {
        finish(it, stream.failure, true);  // the text lives on in the node finish() holds
    } else if ((frame.hd.flags & NGHTTP2_FLAG_END_STREAM) != 0) {
        if (stream.status < 200) {
            finish(it, "h2: response without a final status", false);  // nghttp2 resets it
        } else {
            // A complete response to a request still uploading: the rest is not needed.
            const bool uploading =
                nghttp2_session_get_stream_local_close(session_.get(), stream_id) == 0;
            finish(it, {}, uploading);
        }
    }
    return 0;
}

void H2ClientSession::Impl::on_goaway(std::int32_t last_stream_id) {
    going_away_ = true;
    // Streams above the last one the server processed, and requests nghttp2 has not sent yet
    // (it starts no stream after a GOAWAY), were never processed (RFC 9113 §6.8).
    fail_streams([last_stream_id](std::int32_t id, const Stream& stream) {
        return !stream.sent || id > last_stream_id
                   ? std::string("h2: not processed: the server is going away (GOAWAY)")
                   : std::string();
    });
}

int H2ClientSession::Impl::on_frame_send(const nghttp2_frame& frame) {
    if (frame.hd.type == NGHTTP2_HEADERS && frame.headers.cat == NGHTTP2_HCAT_REQUEST) {
        if (const auto it = streams_.find(frame.hd.stream_id); it != streams_.end()) {
            it->second.sent = true;
        }
    } else if (frame.hd.type == NGHTTP2_GOAWAY && frame.goaway.error_code != NGHTTP2_NO_ERROR) {
        // nghttp2 found a connection error while reading and now ends the connection.
        fail(std::string("h2: connection error: ") +
             nghttp2_http2_strerror(frame.goaway.error_code));
    }
    return 0;
}

int H2ClientSession::Impl::on_stream_close(std::int32_t stream_id, std::uint32_t code) {
    const auto it = streams_.find(stream_id);
    if (it == streams_.end()) {
        return 0;  // reported already
    }
    if (in_receive_) {
        finish(it, close_message(code), false);
    } else {
        it->second.closed_code = code;  // reported by the next receive() or fail_all()
    }
    return 0;
}

int H2ClientSession::Impl::on_invalid_frame(const nghttp2_frame& frame, int lib_error) {
    // A stream error: nghttp2 has queued RST_STREAM and tells nothing more of this stream.
    // Kept too, in case it was a connection error that receive() is to report.
    connection_error_ = nghttp2_strerror(lib_error);
    if (const auto it = streams_.find(frame.hd.stream_id); it != streams_.end()) {
        finish(it, std::string("h2: malformed response: ") + nghttp2_strerror(lib_error), false);
    }
    return 0;
}

template <typename Reason>
void H2ClientSession::Impl::fail_streams(Reason reason) {
    // `reason` gives a stream's failure, or nothing. The ids are collected first: the handler
    // may open streams, which would invalidate an iteration.
    id_scratch_.clear();
    for (const auto& [id, stream] : streams_) {
        if (!reason(id, stream).empty()) {
            id_scratch_.push_back(id);
        }
    }
    for (const std::int32_t id : id_scratch_) {
        if (const auto it = streams_.find(id); it != streams_.end()) {
            finish(it, reason(id, it->second), false);
        }
    }
}

void H2ClientSession::Impl::finish(StreamMap::iterator it, std::string_view error, bool cancel) {
    const std::int32_t stream_id = it->first;
    // Out of the map first: reported once, and the handler may open streams meanwhile.
    const auto node = streams_.extract(it);
    const Stream& stream = node.mapped();
    if (cancel && !failed_) {
        nghttp2_submit_rst_stream(session_.get(), NGHTTP2_FLAG_NONE, stream_id, NGHTTP2_CANCEL);
    }
    H2Response response;
    if (error.empty()) {
        response.status = stream.status;
        response.content_type = stream.content_type;
        if (stream.cache_control) {
            response.cache_control = *stream.cache_control;
        }
        response.body = stream.body;
    } else {
        response.error = error;
    }
    on_response_(static_cast<std::uint32_t>(stream_id), response);
}

void H2ClientSession::Impl::fail_all(std::string_view reason) {
    // A connection that failed here first keeps its own, more telling, reason.
    const std::string common = failed_ ? error_ : std::string(reason);
    fail(common);
    mute_ = true;  // the connection is gone: nothing more to write
    out_.clear();
    out_pos_ = 0;
    const StreamMap streams = std::exchange(streams_, {});
    std::exception_ptr first_error;
    for (const auto& [id, stream] : streams) {
        const std::string message =
            stream.closed_code ? close_message(*stream.closed_code) : common;
        H2Response response;
        response.error = message;
        try {
            on_response_(static_cast<std::uint32_t>(id), response);
        } catch (...) {
            first_error = first_error ? first_error : std::current_exception();
        }
    }
    if (first_error) {
        std::rethrow_exception(first_error);
    }
}

std::span<const std::uint8_t> H2ClientSession::Impl::pending_output() {
    start();
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

// ---- H2ClientSession: forwards to Impl ----

H2ClientSession::H2ClientSession(const H2ClientLimits& limits, ResponseHandler on_response)
    : impl_(std::make_unique<Impl>(limits, std::move(on_response))) {}

H2ClientSession::~H2ClientSession() = default;
H2ClientSession::H2ClientSession(H2ClientSession&&) noexcept = default;
H2ClientSession& H2ClientSession::operator=(H2ClientSession&&) noexcept = default;

void H2ClientSession::start() { impl_->start(); }

std::optional<std::uint32_t> H2ClientSession::request(std::string_view method,
                                                      std::string_view authority,
                                                      std::string_view path,
                                                      std::span<const H2Header> headers,
                                                      std::span<const std::uint8_t> body) {
    return impl_->request(method, authority, path, headers, body);
}

tl::expected<void, std::string> H2ClientSession::receive(std::span<const std::uint8_t> bytes) {
    return impl_->receive(bytes);
}

void H2ClientSession::fail_all(std::string_view reason) { impl_->fail_all(reason); }

std::span<const std::uint8_t> H2ClientSession::pending_output() { return impl_->pending_output(); }

void H2ClientSession::consume_output(std::size_t bytes) noexcept { impl_->consume_output(bytes); }

bool H2ClientSession::wants_read() const noexcept { return impl_->wants_read(); }

bool H2ClientSession::wants_write() const noexcept { return impl_->wants_write(); }

bool H2ClientSession::finished() const noexcept { return !wants_read() && !wants_write(); }

bool H2ClientSession::can_request() const noexcept { return impl_->can_request(); }

std::size_t H2ClientSession::open_streams() const noexcept { return impl_->open_streams(); }

bool H2ClientSession::going_away() const noexcept { return impl_->going_away(); }

}  // namespace moat::http
