//===- ChatTemplate.cpp - A model's chat template, rendered ---------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "dtensor/Tooling/ChatTemplate.h"

#include "ChatTemplateSyntax.h"

namespace dtensor::tooling {

ChatTemplate::~ChatTemplate() = default;

std::unique_ptr<ChatTemplate> ChatTemplate::parse(const std::string &source,
                                                  std::string &error) {
  try {
    std::unique_ptr<ChatTemplate> result(new ChatTemplate());
    result->root_ = jinja::parse(jinja::lex(source));
    return result;
  } catch (const jinja::Failure &failure) {
    error = "chat template: " + failure.message;
    return nullptr;
  }
}

bool ChatTemplate::render(const json &variables, std::string &text,
                          std::string &error) const {
  try {
    text.clear();
    jinja::render(*root_, variables, text);
    return true;
  } catch (const jinja::Failure &failure) {
    error = failure.message;
    return false;
  } catch (const json::exception &failure) {
    error = std::string("chat template: ") + failure.what();
    return false;
  }
}

} // namespace dtensor::tooling
