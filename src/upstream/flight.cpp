#include "flight.hpp"

#include <algorithm>
#include <asio/connect.hpp>
#include <asio/read.hpp>
#include <asio/write.hpp>
#include <cstring>
#include <utility>

#include "moat/core/bytes.hpp"
#include "moat/core/log.hpp"
#include "moat/upstream/address.hpp"
#include "moat/upstream/turn_end.hpp"
#include "reply_match.hpp"

namespace moat::upstream {
namespace {

std::chrono::microseconds micros_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() -
                                                                 t);
}

}  // namespace

void write_flight_key(std::span<const std::uint8_t> query, std::size_t route,
                      std::span<std::uint8_t> out) noexcept {
    std::copy(query.begin(), query.end(), out.begin());
    std::memcpy(out.data() + query.size(), &route, kRouteOctets);
}

Flight::Flight(Forwarder& owner, asio::io_context& io, UdpPool& pool, EncryptedPool& encrypted,
               FlightDeadlines& deadlines, std::shared_ptr<RouteState> route,
               std::size_t route_index, FlightSettings settings,
               std::span<const std::uint8_t> query, std::shared_ptr<FlightMemory> memory,
               RandomSource& random, std::shared_ptr<Stats> stats)
    : memory_(std::move(memory)),
      owner_(&owner),
      io_(io),
      pool_(pool),
      encrypted_(encrypted),
      deadlines_(deadlines),
      route_(std::move(route)),
      settings_(settings),
      keyed_query_(query.size() + kRouteOctets, FlightAllocator(memory_.get())),
      random_(random),
      stats_(std::move(stats)),
      order_(FlightAllocator(memory_.get())),
      udp_(FlightAllocator(memory_.get())) {
    write_flight_key(query, route_index, keyed_query_);
}

Flight::~Flight() {
    for (UdpAttempt& a : udp_) {
        close(a);  // after finish() there is nothing left to cancel
    }
}

void Flight::start() {
    if (done_) {
        return;
    }
    const Clock::time_point now = Clock::now();
    route_->order(settings_.strategy, random_, now, order_);
    deadlines_.totals.arm(total_due_, now + settings_.total_timeout);
    next_attempt(now);
}

void Flight::on_total_due() {
    auto keep_alive = shared_from_this();  // finish() may drop the owner's reference
    if (!done_) {
        log::debug("upstream: total timeout for a query");
        finish(false, {}, {});
    }
}

std::vector<std::uint8_t> Flight::with_new_id() {
    std::vector<std::uint8_t> q(query().begin(), query().end());
    store_u16(q.data(), random_.next_u16());
    return q;
}

std::chrono::milliseconds Flight::attempt_delay(bool hedging) const {
    if (!hedging) {
        return settings_.timeout;
    }
    const auto delay = settings_.hedge_delay.value_or(std::chrono::ceil<std::chrono::milliseconds>(
        route_->p90_rtt(current_server_, kDefaultHedgeDelay)));
    return std::clamp(delay, std::chrono::milliseconds{1}, settings_.timeout);
}

void Flight::arm_attempt_deadline(Clock::time_point now) {
    if (done_) {
        return;
    }
    // Under hedge the attempt keeps running when the delay passes; the next server is asked
    // beside it and the first good answer wins. The last server waits its whole timeout.
    attempt_hedging_ = settings_.strategy == Strategy::hedge && next_ < order_.size();
    (attempt_hedging_ ? deadlines_.hedges : deadlines_.attempts)
        .arm(attempt_due_, now + attempt_delay(attempt_hedging_));
}

void Flight::on_attempt_due() {
    if (done_) {
        return;
    }
    auto keep_alive = shared_from_this();  // the next attempt may finish the flight
    const std::string& text = route_->servers()[current_server_].text;
    const Clock::time_point now = Clock::now();
    if (attempt_hedging_) {
        log::debug("upstream: {} is slow; asking the next server too", text);
        route_->hedged(current_server_);
        next_attempt(now);
        return;
    }
    Stats::bump(stats_->timeouts);
    log::debug("upstream: {} did not answer in time", text);
    route_->timed_out(current_server_, now,
                      std::chrono::duration_cast<std::chrono::microseconds>(settings_.timeout));
    next_attempt(now);
}

void Flight::next_attempt(Clock::time_point now) {
    while (!done_ && next_ < order_.size()) {
        const std::size_t server = order_[next_++];
        const bool started = route_->servers()[server].address.protocol == Protocol::udp
                                 ? start_udp(server, now)
                                 : start_encrypted(server, now);
        if (started) {
            current_server_ = server;
            arm_attempt_deadline(now);
            return;
        }
        route_->failed(server, now, {});
    }
    if (!done_) {
        finish(false, {}, {});  // every server tried
    }
}

bool Flight::start_udp(std::size_t server, Clock::time_point now) {
    const ServerAddress& addr = route_->servers()[server].address;
    UdpAttempt& a = udp_.emplace_back(*this, server, FlightAllocator(memory_.get()));
    a.server = {to_asio(addr.address), addr.port};
    a.sent.assign(query().begin(), query().end());  // the pool writes the ID
    a.started = now;
    if (const std::error_code ec = pool_.send(a.server, a.sent, a, a.ticket)) {
        log::debug("upstream: cannot send to {}: {}", route_->servers()[server].text, ec.message());
        udp_.pop_back();
        return false;
    }
    Stats::bump(stats_->sent);
    route_->sent(server);
    return true;
}

bool Flight::start_encrypted(std::size_t server, Clock::time_point now) {
    const std::shared_ptr<EncryptedUpstream> upstream =
        encrypted_.get(route_->servers()[server].address);
    if (!upstream) {
        return false;  // no TLS context (the CA file did not load; logged at configuration)
    }
    std::vector<std::uint8_t> sent = with_new_id();
    Stats::bump(stats_->sent);
    route_->sent(server);
    upstream->exchange(sent, [self = shared_from_this(), server, sent, started = now](
                                 const std::string& error, std::span<const std::uint8_t> reply) {
        if (self->done_) {
            return;
        }
        if (!error.empty()) {
            log::debug("upstream: {}: {}", self->route_->servers()[server].text, error);
            self->attempt_failed(server, server == self->current_server_);
            return;
        }
        self->on_encrypted_reply(server, sent, reply, started);
    });
    return true;
}

void Flight::on_encrypted_reply(std::size_t server, std::span<const std::uint8_t> sent,
                                std::span<const std::uint8_t> reply, Clock::time_point started) {
    auto keep_alive = shared_from_this();
    const std::string& text = route_->servers()[server].text;
    const ReplyCheck check = check_reply(sent, reply);
    if (check == ReplyCheck::accept) {
        route_->succeeded(server, micros_since(started));
        finish(true, reply, text);
        return;
    }
    // Over a stream the exchange is over: anything but our answer fails this attempt.
    Stats::bump(check == ReplyCheck::error_rcode ? stats_->error_rcodes : stats_->ignored);
    log::debug("upstream: answer from {} not used: {}", text, to_text(check));
    attempt_failed(server, server == current_server_);
}

void Flight::on_send_failed(UdpAttempt& a, const std::error_code& error) {
    if (done_ || !a.open) {
        return;
    }
    auto keep_alive = shared_from_this();
    log::debug("upstream: cannot send to {}: {}", route_->servers()[a.server_index].text,
               error.message());
    close(a);
    attempt_failed(a.server_index, a.server_index == current_server_);
}

void Flight::close(UdpAttempt& a) noexcept {
    a.open = false;
    pool_.cancel(a.ticket);
}

void Flight::on_datagram(UdpAttempt& a, std::span<const std::uint8_t> reply,
                         const asio::ip::udp::endpoint& from) {
    if (done_ || !a.open) {
        return;
    }
    auto keep_alive = shared_from_this();  // finish() may drop the owner's reference
    const std::string& text = route_->servers()[a.server_index].text;
    if (from != a.server) {
        Stats::bump(stats_->ignored);
        log::debug("upstream: ignored a datagram from {}:{} (expected {})",
                   from.address().to_string(), from.port(), text);
        return;
    }
    const ReplyCheck check = check_reply(a.sent, reply);
    switch (check) {
        case ReplyCheck::accept:
            route_->succeeded(a.server_index, micros_since(a.started));
            finish(true, reply, text);
            return;
        case ReplyCheck::truncated:
            Stats::bump(stats_->tcp_retries);
            log::debug("upstream: {} truncated the answer; retrying over TCP", text);
            close(a);
            start_tcp(a.server_index);
            if (a.server_index == current_server_) {
                arm_attempt_deadline(Clock::now());
            }
            return;
        case ReplyCheck::error_rcode:
            Stats::bump(stats_->error_rcodes);
            log::debug("upstream: {} answered with an error rcode", text);
            close(a);
            attempt_failed(a.server_index, a.server_index == current_server_);
            return;
        case ReplyCheck::wrong_id:
        case ReplyCheck::wrong_question:
        case ReplyCheck::malformed:
            Stats::bump(stats_->ignored);
            log::debug("upstream: ignored an answer from {}: {}", text, to_text(check));
            return;
    }
}

void Flight::start_tcp(std::size_t server) {
    const ServerAddress& addr = route_->servers()[server].address;
    auto owned = std::make_unique<TcpAttempt>(io_);
    TcpAttempt& a = *owned;
    tcp_.push_back(std::move(owned));
    a.server_index = server;
    const std::vector<std::uint8_t> q = with_new_id();
    a.framed.resize(2 + q.size());
    store_u16(a.framed.data(), static_cast<std::uint16_t>(q.size()));
    std::copy(q.begin(), q.end(), a.framed.begin() + 2);
    a.started = Clock::now();
    Stats::bump(stats_->sent);
    route_->sent(server);
    auto self = shared_from_this();
    auto fail = [self, &a](const std::error_code& ec) {
        if (self->done_ || !a.open) {
            return;
        }
        log::debug("upstream: TCP to {} failed: {}", self->route_->servers()[a.server_index].text,
                   ec.message());
        a.open = false;
        a.socket.close();
        self->attempt_failed(a.server_index, a.server_index == self->current_server_);
    };
    a.socket.async_connect({to_asio(addr.address), addr.port}, [self, &a,
                                                                fail](const std::error_code& ec) {
        if (ec) {
            fail(ec);
            return;
        }
        asio::async_write(
            a.socket, asio::buffer(a.framed),
            [self, &a, fail](const std::error_code& wec, std::size_t /*n*/) {
                if (wec) {
                    fail(wec);
                    return;
                }
                asio::async_read(
                    a.socket, asio::buffer(a.length),
                    [self, &a, fail](const std::error_code& lec, std::size_t /*n*/) {
                        if (lec) {
                            fail(lec);
                            return;
                        }
                        a.body.resize(load_u16(a.length.data()));
                        asio::async_read(
                            a.socket, asio::buffer(a.body),
                            [self, &a, fail](const std::error_code& bec, std::size_t /*n*/) {
                                if (bec) {
                                    fail(bec);
                                    return;
                                }
                                if (!self->done_ && a.open) {
                                    TurnEnd::of(self->io_).in_batch([&] { self->on_tcp_reply(a); });
                                }
                            });
                    });
            });
    });
}

void Flight::on_tcp_reply(TcpAttempt& a) {
    const std::span<const std::uint8_t> sent(a.framed.data() + 2, a.framed.size() - 2);
    const ReplyCheck check = check_reply(sent, a.body);
    const std::string& text = route_->servers()[a.server_index].text;
    if (check == ReplyCheck::accept) {
        route_->succeeded(a.server_index, micros_since(a.started));
        finish(true, a.body, text);
        return;
    }
    if (check == ReplyCheck::error_rcode) {
        Stats::bump(stats_->error_rcodes);
    } else {
        Stats::bump(stats_->ignored);
    }
    log::debug("upstream: TCP answer from {} not used: {}", text, to_text(check));
    a.open = false;
    a.socket.close();
    attempt_failed(a.server_index, a.server_index == current_server_);
}

void Flight::attempt_failed(std::size_t server, bool was_current) {
    // Penalised like a timeout, so `fastest` does not rank a failing server as unmeasured.
    const Clock::time_point now = Clock::now();
    route_->failed(server, now,
                   std::chrono::duration_cast<std::chrono::microseconds>(settings_.timeout));
    if (was_current) {
        attempt_due_.disarm();  // it belonged to the attempt that just ended
        next_attempt(now);
    }
}

void Flight::finish(bool ok, std::span<const std::uint8_t> reply, const std::string& server) {
    if (done_) {
        return;
    }
    done_ = true;
    auto keep_alive = shared_from_this();
    total_due_.disarm();
    attempt_due_.disarm();
    for (UdpAttempt& a : udp_) {
        close(a);
    }
    for (auto& a : tcp_) {
        a->open = false;
        std::error_code ignored;
        a->socket.close(ignored);
    }
    Stats::bump(ok ? stats_->answered : stats_->failed);
    Callback first = std::exchange(first_waiter_, nullptr);
    std::vector<Callback> more = std::move(more_waiters_);
    if (owner_ != nullptr) {
        owner_->finished(key());
        owner_ = nullptr;
    }
    const Result result{ok, reply, server};
    if (first) {
        first(result);
    }
    for (Callback& w : more) {
        w(result);
    }
}

}  // namespace moat::upstream
