// Every mistake in a training plan is an error, and no train_step or
// eval_step is added: keys unknown, missing or out of range, a function or
// loss that does not exist, a group or frozen pattern that matches no weight
// (or frozen patterns that leave none to train), an activation_checkpointing
// pattern that matches no module, is not a string or is listed twice, an
// empty activation_checkpointing list, a loss
// that is not a float of one element, a forward with state, a name taken.
// RUN: dtensor-opt %s --dtensor-build-train-step -split-input-file -verify-diagnostics

// -----

// Unknown key.
// expected-error @+1 {{'dtensor.training': momentum: unknown key}}
module attributes {dtensor.training = {function = "f", optimizer = {kind = "sgd"}, momentum = 0.9 : f64}} {
  dtensor.mesh @mesh shape [2]
  func.func @f(%x: tensor<4xf32> {dtensor.name = "x"}, %w: tensor<4xf32> {dtensor.name = "w", dtensor.weight})
      -> (tensor<f32> {dtensor.name = "loss"}, tensor<4xf32>) {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<f32>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
    %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
        ins(%x, %w : tensor<4xf32>, tensor<4xf32>) outs(%init : tensor<f32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %m = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    return %r, %x : tensor<f32>, tensor<4xf32>
  }
}

// -----

// No optimizer.
// expected-error @+1 {{'dtensor.training': optimizer: is required}}
module attributes {dtensor.training = {function = "f"}} {
  dtensor.mesh @mesh shape [2]
  func.func @f(%x: tensor<4xf32> {dtensor.name = "x"}, %w: tensor<4xf32> {dtensor.name = "w", dtensor.weight})
      -> (tensor<f32> {dtensor.name = "loss"}, tensor<4xf32>) {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<f32>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
    %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
        ins(%x, %w : tensor<4xf32>, tensor<4xf32>) outs(%init : tensor<f32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %m = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    return %r, %x : tensor<f32>, tensor<4xf32>
  }
}

// -----

// Unknown optimizer.
// expected-error @+1 {{'dtensor.training': optimizer.kind: unknown optimizer 'lamb' (expected sgd or adamw)}}
module attributes {dtensor.training = {function = "f", optimizer = {kind = "lamb"}}} {
  dtensor.mesh @mesh shape [2]
  func.func @f(%x: tensor<4xf32> {dtensor.name = "x"}, %w: tensor<4xf32> {dtensor.name = "w", dtensor.weight})
      -> (tensor<f32> {dtensor.name = "loss"}, tensor<4xf32>) {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<f32>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
    %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
        ins(%x, %w : tensor<4xf32>, tensor<4xf32>) outs(%init : tensor<f32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %m = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    return %r, %x : tensor<f32>, tensor<4xf32>
  }
}

// -----

// A key of the other optimizer.
// expected-error @+1 {{'dtensor.training': optimizer.betas: unknown key}}
module attributes {dtensor.training = {function = "f", optimizer = {kind = "sgd", betas = [0.9, 0.99]}}} {
  dtensor.mesh @mesh shape [2]
  func.func @f(%x: tensor<4xf32> {dtensor.name = "x"}, %w: tensor<4xf32> {dtensor.name = "w", dtensor.weight})
      -> (tensor<f32> {dtensor.name = "loss"}, tensor<4xf32>) {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<f32>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
    %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
        ins(%x, %w : tensor<4xf32>, tensor<4xf32>) outs(%init : tensor<f32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %m = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    return %r, %x : tensor<f32>, tensor<4xf32>
  }
}

// -----

// A value out of range.
// expected-error @+1 {{'dtensor.training': optimizer.betas[1]: expected a number in [0, 1), got 1.5}}
module attributes {dtensor.training = {function = "f", optimizer = {kind = "adamw", betas = [0.9, 1.5]}}} {
  dtensor.mesh @mesh shape [2]
  func.func @f(%x: tensor<4xf32> {dtensor.name = "x"}, %w: tensor<4xf32> {dtensor.name = "w", dtensor.weight})
      -> (tensor<f32> {dtensor.name = "loss"}, tensor<4xf32>) {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<f32>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
    %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
        ins(%x, %w : tensor<4xf32>, tensor<4xf32>) outs(%init : tensor<f32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %m = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    return %r, %x : tensor<f32>, tensor<4xf32>
  }
}

// -----

// An unknown decay.
// expected-error @+1 {{'dtensor.training': schedule.decay: unknown decay 'step' (expected constant, linear or cosine)}}
module attributes {dtensor.training = {function = "f", optimizer = {kind = "sgd"}, schedule = {decay = "step"}}} {
  dtensor.mesh @mesh shape [2]
  func.func @f(%x: tensor<4xf32> {dtensor.name = "x"}, %w: tensor<4xf32> {dtensor.name = "w", dtensor.weight})
      -> (tensor<f32> {dtensor.name = "loss"}, tensor<4xf32>) {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<f32>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
    %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
        ins(%x, %w : tensor<4xf32>, tensor<4xf32>) outs(%init : tensor<f32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %m = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    return %r, %x : tensor<f32>, tensor<4xf32>
  }
}

// -----

// No such function.
// expected-error @+1 {{'dtensor.training': function: no function with a body named 'g'}}
module attributes {dtensor.training = {function = "g", optimizer = {kind = "sgd"}}} {
  dtensor.mesh @mesh shape [2]
  func.func @f(%x: tensor<4xf32> {dtensor.name = "x"}, %w: tensor<4xf32> {dtensor.name = "w", dtensor.weight})
      -> (tensor<f32> {dtensor.name = "loss"}, tensor<4xf32>) {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<f32>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
    %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
        ins(%x, %w : tensor<4xf32>, tensor<4xf32>) outs(%init : tensor<f32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %m = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    return %r, %x : tensor<f32>, tensor<4xf32>
  }
}

// -----

// A loss out of range.
// expected-error @+1 {{'dtensor.training': loss: 'f' has 2 results; there is no result 2}}
module attributes {dtensor.training = {function = "f", loss = 2 : i64, optimizer = {kind = "sgd"}}} {
  dtensor.mesh @mesh shape [2]
  func.func @f(%x: tensor<4xf32> {dtensor.name = "x"}, %w: tensor<4xf32> {dtensor.name = "w", dtensor.weight})
      -> (tensor<f32> {dtensor.name = "loss"}, tensor<4xf32>) {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<f32>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
    %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
        ins(%x, %w : tensor<4xf32>, tensor<4xf32>) outs(%init : tensor<f32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %m = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    return %r, %x : tensor<f32>, tensor<4xf32>
  }
}

// -----

// A pattern that matches no weight.
// expected-error @+1 {{'dtensor.training': groups[0].params[1]: the pattern '*.bias' matches no weight}}
module attributes {dtensor.training = {function = "f", optimizer = {kind = "sgd"}, groups = [{params = ["w", "*.bias"]}]}} {
  dtensor.mesh @mesh shape [2]
  func.func @f(%x: tensor<4xf32> {dtensor.name = "x"}, %w: tensor<4xf32> {dtensor.name = "w", dtensor.weight})
      -> (tensor<f32> {dtensor.name = "loss"}, tensor<4xf32>) {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<f32>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
    %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
        ins(%x, %w : tensor<4xf32>, tensor<4xf32>) outs(%init : tensor<f32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %m = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    return %r, %x : tensor<f32>, tensor<4xf32>
  }
}

// -----

// A frozen pattern that matches no weight.
// expected-error @+1 {{'dtensor.training': frozen[0]: the pattern 'rope.*' matches no weight}}
module attributes {dtensor.training = {function = "f", optimizer = {kind = "sgd"}, frozen = ["rope.*"]}} {
  dtensor.mesh @mesh shape [2]
  func.func @f(%x: tensor<4xf32> {dtensor.name = "x"}, %w: tensor<4xf32> {dtensor.name = "w", dtensor.weight})
      -> (tensor<f32> {dtensor.name = "loss"}, tensor<4xf32>) {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<f32>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
    %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
        ins(%x, %w : tensor<4xf32>, tensor<4xf32>) outs(%init : tensor<f32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %m = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    return %r, %x : tensor<f32>, tensor<4xf32>
  }
}

// -----

// Every weight frozen: nothing to train.
// expected-error @+1 {{'dtensor.training': the forward function 'f' has no float weight to train (all are frozen)}}
module attributes {dtensor.training = {function = "f", optimizer = {kind = "sgd"}, frozen = ["*"]}} {
  dtensor.mesh @mesh shape [2]
  func.func @f(%x: tensor<4xf32> {dtensor.name = "x"}, %w: tensor<4xf32> {dtensor.name = "w", dtensor.weight})
      -> (tensor<f32> {dtensor.name = "loss"}, tensor<4xf32>) {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<f32>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
    %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
        ins(%x, %w : tensor<4xf32>, tensor<4xf32>) outs(%init : tensor<f32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %m = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    return %r, %x : tensor<f32>, tensor<4xf32>
  }
}

// -----

// Frozen patterns are strings.
// expected-error @+1 {{'dtensor.training': frozen: expected strings}}
module attributes {dtensor.training = {function = "f", optimizer = {kind = "sgd"}, frozen = [1]}} {
  dtensor.mesh @mesh shape [2]
  func.func @f(%x: tensor<4xf32> {dtensor.name = "x"}, %w: tensor<4xf32> {dtensor.name = "w", dtensor.weight})
      -> (tensor<f32> {dtensor.name = "loss"}, tensor<4xf32>) {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<f32>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
    %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
        ins(%x, %w : tensor<4xf32>, tensor<4xf32>) outs(%init : tensor<f32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %m = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    return %r, %x : tensor<f32>, tensor<4xf32>
  }
}

// -----

// The loss must be a float of one element.
module attributes {dtensor.training = {function = "f", loss = 1 : i64, optimizer = {kind = "sgd"}}} {
  dtensor.mesh @mesh shape [2]
  // expected-error @+1 {{result 1 of 'f' ('tensor<4xf32>') is not a float tensor of one element, so it cannot be the loss}}
  func.func @f(%x: tensor<4xf32> {dtensor.name = "x"}, %w: tensor<4xf32> {dtensor.name = "w", dtensor.weight})
      -> (tensor<f32> {dtensor.name = "loss"}, tensor<4xf32>) {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<f32>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
    %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
        ins(%x, %w : tensor<4xf32>, tensor<4xf32>) outs(%init : tensor<f32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %m = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    return %r, %x : tensor<f32>, tensor<4xf32>
  }
}

// -----

// A forward with state (a KV cache) is not trained.
// expected-error @+1 {{'dtensor.training': the forward function 'f' has state ('cache'); a training step's forward has none}}
module attributes {dtensor.training = {function = "f", optimizer = {kind = "sgd"}}} {
  func.func @f(%c: tensor<4xf32> {dtensor.name = "cache", dtensor.state}) -> tensor<f32> {
    %z = arith.constant dense<0.0> : tensor<f32>
    return %z : tensor<f32>
  }
}

// -----

// The entries' names are taken.
// expected-error @+1 {{'dtensor.training': a symbol named 'train_step' exists already}}
module attributes {dtensor.training = {function = "f", optimizer = {kind = "sgd"}}} {
  dtensor.mesh @mesh shape [2]
  func.func @f(%x: tensor<4xf32> {dtensor.name = "x"}, %w: tensor<4xf32> {dtensor.name = "w", dtensor.weight})
      -> (tensor<f32> {dtensor.name = "loss"}, tensor<4xf32>) {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<f32>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
    %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
        ins(%x, %w : tensor<4xf32>, tensor<4xf32>) outs(%init : tensor<f32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %m = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    return %r, %x : tensor<f32>, tensor<4xf32>
  }
  func.func @train_step() {
    return
  }
}

// -----

// Nothing to train.
// expected-error @+1 {{'dtensor.training': the forward function 'f' has no float weight to train}}
module attributes {dtensor.training = {function = "f", optimizer = {kind = "sgd"}}} {
  func.func @f(%x: tensor<f32>) -> tensor<f32> {
    return %x : tensor<f32>
  }
}

// -----

// An activation_checkpointing pattern that matches no module the forward's
// locations name (here layers.0 and layers.0.mlp).
// expected-error @+1 {{'dtensor.training': activation_checkpointing[1]: the pattern 'blocks.*' matches no module of 'f'}}
module attributes {dtensor.training = {function = "f", optimizer = {kind = "sgd"}, activation_checkpointing = ["layers.*", "blocks.*"]}} {
  dtensor.mesh @mesh shape [2]
  func.func @f(%x: tensor<4xf32> {dtensor.name = "x"}, %w: tensor<4xf32> {dtensor.name = "layers.0.w", dtensor.weight})
      -> (tensor<f32> {dtensor.name = "loss"}, tensor<4xf32>) {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<f32>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
    %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
        ins(%x, %w : tensor<4xf32>, tensor<4xf32>) outs(%init : tensor<f32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %m = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    } -> tensor<f32> loc("layers.0.mlp"("m.json":1:1))
    return %r, %x : tensor<f32>, tensor<4xf32>
  }
}

// -----

// activation_checkpointing lists strings.
// expected-error @+1 {{'dtensor.training': activation_checkpointing: expected strings}}
module attributes {dtensor.training = {function = "f", optimizer = {kind = "sgd"}, activation_checkpointing = [1]}} {
  dtensor.mesh @mesh shape [2]
  func.func @f(%x: tensor<4xf32> {dtensor.name = "x"}, %w: tensor<4xf32> {dtensor.name = "layers.0.w", dtensor.weight})
      -> (tensor<f32> {dtensor.name = "loss"}, tensor<4xf32>) {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<f32>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
    %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
        ins(%x, %w : tensor<4xf32>, tensor<4xf32>) outs(%init : tensor<f32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %m = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    } -> tensor<f32> loc("layers.0.mlp"("m.json":1:1))
    return %r, %x : tensor<f32>, tensor<4xf32>
  }
}

// -----

// activation_checkpointing lists a pattern once.
// expected-error @+1 {{'dtensor.training': activation_checkpointing[1]: the pattern 'layers.*' is listed twice (also at [0])}}
module attributes {dtensor.training = {function = "f", optimizer = {kind = "sgd"}, activation_checkpointing = ["layers.*", "layers.*"]}} {
  dtensor.mesh @mesh shape [2]
  func.func @f(%x: tensor<4xf32> {dtensor.name = "x"}, %w: tensor<4xf32> {dtensor.name = "layers.0.w", dtensor.weight})
      -> (tensor<f32> {dtensor.name = "loss"}, tensor<4xf32>) {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<f32>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
    %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
        ins(%x, %w : tensor<4xf32>, tensor<4xf32>) outs(%init : tensor<f32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %m = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    } -> tensor<f32> loc("layers.0.mlp"("m.json":1:1))
    return %r, %x : tensor<f32>, tensor<4xf32>
  }
}

// -----

// activation_checkpointing lists at least one pattern.
// expected-error @+1 {{'dtensor.training': activation_checkpointing: expected at least one module pattern}}
module attributes {dtensor.training = {function = "f", optimizer = {kind = "sgd"}, activation_checkpointing = []}} {
  dtensor.mesh @mesh shape [2]
  func.func @f(%x: tensor<4xf32> {dtensor.name = "x"}, %w: tensor<4xf32> {dtensor.name = "layers.0.w", dtensor.weight})
      -> (tensor<f32> {dtensor.name = "loss"}, tensor<4xf32>) {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<f32>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
    %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
        ins(%x, %w : tensor<4xf32>, tensor<4xf32>) outs(%init : tensor<f32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %m = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
    } -> tensor<f32> loc("layers.0.mlp"("m.json":1:1))
    return %r, %x : tensor<f32>, tensor<4xf32>
  }
}
