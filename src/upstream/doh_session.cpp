#include "doh_session.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <utility>

#include "moat/wire/types.hpp"

namespace moat::upstream {
namespace {

constexpr std::string_view kDnsMessage = "application/dns-message";

/// Why a stream that ended brought no answer.
std::string failure(const http::H2Response& response) {
    if (response.status == 0) {
        return "HTTP/2 stream failed: " + std::string(response.error);
    }
    if (response.status != 200) {
        return "HTTP status " + std::to_string(response.status);
    }
    return "an answer of " + std::to_string(response.body.size()) + " octets";
}

}  // namespace

void DohSession::start(std::string authority, std::string path) {
    if (in_flight()) {
        throw std::logic_error("DohSession::start: queries of the last session are in flight");
    }
    authority_ = std::move(authority);
    path_ = std::move(path);
    http::H2ClientLimits limits;
    limits.max_concurrent_streams = kMaxStreams;
    limits.max_response_body_bytes = wire::kMaxMessageSize;
    end_session();
    h2_ = std::make_unique<http::H2ClientSession>(
        limits, [this](std::uint32_t stream, const http::H2Response& response) {
            on_response(stream, response);
        });
    h2_->start();
}

bool DohSession::send(EncryptedExchange& x) {
    if (!h2_ || deliver_ != nullptr || !h2_->can_request()) {
        return false;
    }
    std::vector<std::uint8_t> body = x.query;
    std::fill_n(body.begin(), std::min<std::size_t>(2, body.size()), std::uint8_t{0});
    const std::array<http::H2Header, 2> headers{
        {{"content-type", kDnsMessage}, {"accept", kDnsMessage}}};
    const auto stream = h2_->request("POST", authority_, path_, headers, body);
    if (!stream) {
        return false;
    }
    sent_.emplace(*stream, std::move(x));
    return true;
}

tl::expected<void, std::string> DohSession::receive(std::span<const std::uint8_t> bytes,
                                                    const Deliver& deliver) {
    if (deliver_ != nullptr) {
        throw std::logic_error("DohSession::receive: called again from its own deliver");
    }
    if (!h2_) {
        return tl::unexpected(std::string("no HTTP/2 session"));
    }
    // Kept alive for the call whatever `deliver` does: end_session() only retires it.
    http::H2ClientSession& session = *h2_;
    deliver_ = &deliver;
    reading_ = &session;
    tl::expected<void, std::string> received;
    try {
        received = session.receive(bytes);
    } catch (...) {
        settle();
        throw;
    }
    settle();
    return received;
}

void DohSession::settle() noexcept {
    deliver_ = nullptr;
    reading_ = nullptr;
    retired_.reset();
}

void DohSession::on_response(std::uint32_t stream, const http::H2Response& response) {
    // A stream of a session dropped from a delivery finds nothing: take_in_flight() emptied
    // sent_, and send() opens no stream until receive() returns.
    const auto it = sent_.find(stream);
    if (it == sent_.end() || deliver_ == nullptr) {
        return;  // (the session reports from receive() only: fail_all() is never called)
    }
    EncryptedExchange x = std::move(it->second);
    sent_.erase(it);
    if (response.status != 200 || response.body.size() < wire::kHeaderSize) {
        (*deliver_)(x, failure(response), {});
        return;
    }
    std::vector<std::uint8_t> reply(response.body.begin(), response.body.end());
    std::copy_n(x.query.begin(), std::min<std::size_t>(2, x.query.size()), reply.begin());
    (*deliver_)(x, {}, reply);
}

bool DohSession::spent() const noexcept { return h2_ && h2_->going_away() && sent_.empty(); }

bool DohSession::wants_write() const noexcept { return h2_ && h2_->wants_write(); }

std::span<const std::uint8_t> DohSession::pending_output() {
    return h2_ ? h2_->pending_output() : std::span<const std::uint8_t>{};
}

void DohSession::consume_output(std::size_t bytes) noexcept {
    if (h2_) {
        h2_->consume_output(bytes);
    }
}

std::vector<EncryptedExchange> DohSession::take_in_flight() {
    std::vector<EncryptedExchange> out;
    out.reserve(sent_.size());
    for (auto& [stream, x] : sent_) {
        out.push_back(std::move(x));
    }
    sent_.clear();
    end_session();
    return out;
}

void DohSession::end_session() noexcept {
    if (h2_ && h2_.get() == reading_) {
        // Called from the session's own handler: it may not be destroyed before receive()
        // returns.
        retired_ = std::move(h2_);
    }
    h2_.reset();
}

}  // namespace moat::upstream
