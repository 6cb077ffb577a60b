#include "encrypted_upstream.hpp"

#include <algorithm>
#include <asio/post.hpp>
#include <asio/write.hpp>

#include "moat/core/log.hpp"
#include "moat/upstream/address.hpp"

namespace moat::upstream {
namespace {

constexpr std::size_t kReadChunk = 16384;
constexpr std::chrono::milliseconds kFirstBackoff{250};
constexpr std::chrono::milliseconds kMaxBackoff{30000};
/// A connection without queries this long is closed (servers close theirs after 10-30 s).
constexpr std::chrono::seconds kIdle{60};

}  // namespace

EncryptedUpstream::EncryptedUpstream(asio::io_context& io, ServerAddress server,
                                     std::shared_ptr<TlsClientContext> tls,
                                     BootstrapResolver& bootstrap,
                                     std::chrono::milliseconds timeout)
    : io_(io),
      turn_end_(TurnEnd::of(io)),
      server_(std::move(server)),
      tls_(std::move(tls)),
      bootstrap_(bootstrap),
      timeout_(timeout),
      watchdog_(io) {}

EncryptedUpstream::~EncryptedUpstream() = default;

void EncryptedUpstream::exchange(std::span<const std::uint8_t> query, ExchangeDone done) {
    last_used_ = std::chrono::steady_clock::now();
    if (state_ == State::backoff) {
        if (last_used_ < backoff_until_) {
            asio::post(io_, [done = std::move(done), why = "not connected after: " + last_error_] {
                done(why, {});
            });
            return;
        }
        state_ = State::closed;
    }
    waiting_.push_back({std::vector<std::uint8_t>(query.begin(), query.end()), std::move(done)});
    if (state_ == State::ready) {
        send_waiting();
    } else if (state_ == State::closed) {
        connect();
    }
}

void EncryptedUpstream::shutdown() {
    ++generation_;
    watchdog_.cancel();
    if (stream_) {
        std::error_code ignored;
        stream_->lowest_layer().close(ignored);
    }
    state_ = State::closed;
    std::vector<Exchange> sent = take_in_flight();
    std::deque<Exchange> all(std::make_move_iterator(sent.begin()),
                             std::make_move_iterator(sent.end()));
    std::move(waiting_.begin(), waiting_.end(), std::back_inserter(all));
    waiting_.clear();
    fail(all, "shutting down");
}

void EncryptedUpstream::fail(std::deque<Exchange>& exchanges, const std::string& why) {
    auto failed = std::move(exchanges);
    exchanges.clear();
    for (Exchange& x : failed) {
        fail_one(std::move(x), why);
    }
}

void EncryptedUpstream::fail_one(Exchange&& x, std::string why) {
    asio::post(io_, [done = std::move(x.done), why = std::move(why)] { done(why, {}); });
}

void EncryptedUpstream::connect() {
    state_ = State::connecting;
    const std::uint64_t generation = ++generation_;
    watchdog_.expires_after(timeout_);
    watchdog_.async_wait([self = shared_from_this(), generation](const std::error_code& ec) {
        if (!ec && self->generation_ == generation && self->state_ == State::connecting) {
            self->could_not_connect("no connection within " +
                                    std::to_string(self->timeout_.count()) + " ms");
        }
    });
    if (!server_.resolve) {
        connect_to(server_.address);
        return;
    }
    bootstrap_.resolve(server_.name, timeout_,
                       [self = shared_from_this(), generation](const auto& address) {
                           if (self->generation_ != generation) {
                               return;
                           }
                           if (!address) {
                               self->could_not_connect(address.error());
                               return;
                           }
                           self->connect_to(*address);
                       });
}

void EncryptedUpstream::connect_to(const IpAddress& address) {
    stream_ = std::make_unique<TlsStream>(io_, tls_->context());
    SSL* ssl = stream_->native_handle();
    prepare_client(ssl, server_, alpn());
    keep_sessions_in(ssl, &session_);
    if (session_) {
        SSL_set_session(ssl, session_.get());
    }
    const std::uint64_t generation = generation_;
    stream_->lowest_layer().async_connect(
        {to_asio(address), server_.port},
        [self = shared_from_this(), generation](const std::error_code& ec) {
            if (self->generation_ != generation) {
                return;
            }
            if (ec) {
                self->could_not_connect(ec.message());
                return;
            }
            std::error_code ignored;
            self->stream_->lowest_layer().set_option(asio::ip::tcp::no_delay(true), ignored);
            self->handshake();
        });
}

void EncryptedUpstream::handshake() {
    const std::uint64_t generation = generation_;
    stream_->async_handshake(
        asio::ssl::stream_base::client,
        [self = shared_from_this(), generation](const std::error_code& ec) {
            if (self->generation_ != generation) {
                return;
            }
            SSL* ssl = self->stream_->native_handle();
            if (ec) {
                const long verify = SSL_get_verify_result(ssl);
                self->could_not_connect(verify != X509_V_OK
                                            ? std::string("certificate not accepted: ") +
                                                  X509_verify_cert_error_string(verify)
                                            : "TLS handshake failed: " + ec.message());
                return;
            }
            if (std::string pin = check_pins(ssl, self->server_.pins); !pin.empty()) {
                self->could_not_connect("certificate not accepted: " + pin);
                return;
            }
            self->connected();
        });
}

void EncryptedUpstream::connected() {
    std::string why;
    if (!on_connected(*stream_, why)) {
        could_not_connect(why);
        return;
    }
    ++connections_;
    const bool reused = SSL_session_reused(stream_->native_handle()) == 1;
    if (reused) {
        ++resumed_;
    }
    log::debug("upstream: connected to {}{}", server_.text, reused ? " (TLS resumed)" : "");
    state_ = State::ready;
    backoff_ = {};
    last_used_ = std::chrono::steady_clock::now();
    read_more();
    arm_watchdog();
    send_waiting();
}

void EncryptedUpstream::could_not_connect(const std::string& why) {
    ++generation_;
    watchdog_.cancel();
    if (stream_) {
        std::error_code ignored;
        stream_->lowest_layer().close(ignored);
    }
    backoff_ = std::clamp(backoff_ * 2, kFirstBackoff, kMaxBackoff);
    backoff_until_ = std::chrono::steady_clock::now() + backoff_;
    state_ = State::backoff;
    last_error_ = why;
    log::warn("upstream: cannot connect to {}: {} (retrying in {} ms)", server_.text, why,
              backoff_.count());
    fail(waiting_, why);
}

void EncryptedUpstream::drop(const std::string& why) {
    if (state_ != State::ready) {
        return;
    }
    ++generation_;
    watchdog_.cancel();
    std::error_code ignored;
    stream_->lowest_layer().close(ignored);
    state_ = State::closed;
    queued_.clear();
    writing_.clear();
    std::deque<Exchange> failed;
    std::vector<Exchange> sent = take_in_flight();
    std::reverse(sent.begin(), sent.end());  // pushed to the front: they keep their order
    for (Exchange& x : sent) {
        if (x.retried) {
            failed.push_back(std::move(x));
        } else {
            x.retried = true;
            waiting_.push_front(std::move(x));
        }
    }
    log::debug("upstream: connection to {} closed ({}); {} queries to send again", server_.text,
               why, waiting_.size());
    fail(failed, why);
    if (!waiting_.empty()) {
        connect();
    }
}

void EncryptedUpstream::send_waiting() {
    while (state_ == State::ready && !waiting_.empty()) {
        // The watchdog's stall clock starts when the first query goes out on a quiet
        // connection, not at the last answer before the quiet: asked here, before send() puts
        // the query in flight (both protocols do that before their bytes reach write()).
        const bool quiet = !in_flight();
        if (!send(waiting_.front())) {
            break;  // the protocol's limit: the rest go as answers free room
        }
        if (quiet) {
            stalled_since_ = std::chrono::steady_clock::now();
        }
        waiting_.pop_front();
    }
}

void EncryptedUpstream::write(std::span<const std::uint8_t> bytes) {
    queued_.insert(queued_.end(), bytes.begin(), bytes.end());
    write_next();
}

void EncryptedUpstream::write_next() {
    if (!writing_.empty() || queued_.empty() || state_ != State::ready) {
        return;
    }
    writing_.swap(queued_);
    const std::uint64_t generation = generation_;
    asio::async_write(
        *stream_, asio::buffer(writing_),
        [self = shared_from_this(), generation](const std::error_code& ec, std::size_t) {
            if (self->generation_ != generation) {
                return;
            }
            self->writing_.clear();
            if (ec) {
                self->drop(ec.message());
                return;
            }
            self->write_next();
        });
}

void EncryptedUpstream::read_more() {
    chunk_.resize(kReadChunk);
    const std::uint64_t generation = generation_;
    stream_->async_read_some(asio::buffer(chunk_), [self = shared_from_this(), generation](
                                                       const std::error_code& ec, std::size_t n) {
        if (self->generation_ != generation) {
            return;
        }
        if (ec) {
            self->drop(ec == asio::error::eof ? "closed by the server" : ec.message());
            return;
        }
        // A batch: the clients' answers these bytes complete leave together when they are all
        // taken, not in a handler posted behind another poll of the sockets (turn_end.hpp).
        self->turn_end_.in_batch(
            [&] { self->on_bytes(std::span<const std::uint8_t>(self->chunk_.data(), n)); });
        if (self->generation_ == generation) {
            self->read_more();
        }
    });
}

void EncryptedUpstream::arm_watchdog() {
    const std::uint64_t generation = generation_;
    watchdog_.expires_after(timeout_);
    watchdog_.async_wait([self = shared_from_this(), generation](const std::error_code& ec) {
        if (ec || self->generation_ != generation || self->state_ != State::ready) {
            return;
        }
        const auto now = std::chrono::steady_clock::now();
        if (self->in_flight() && self->stalled_since_ &&
            now - *self->stalled_since_ > 2 * self->timeout_) {
            self->drop("no answer in time");
            return;
        }
        if (!self->in_flight() && self->waiting_.empty() && now - self->last_used_ > kIdle) {
            log::debug("upstream: closing the idle connection to {}", self->server_.text);
            ++self->generation_;
            std::error_code ignored;
            self->stream_->lowest_layer().close(ignored);
            self->state_ = State::closed;
            return;
        }
        self->arm_watchdog();
    });
}

}  // namespace moat::upstream
