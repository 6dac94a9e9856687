-- Drives a headless Neovim configured by docs/neovim*.lua against impact-ls and writes what the
-- user would see to $IMPACT_NVIM_OUT as JSON: diagnostics in another buffer, lenses, actions.
-- Runs on Neovim 0.7 (Debian 12) as well as 0.11: the few APIs that changed are shimmed here.
local root = vim.env.IMPACT_NVIM_ROOT
local result = { version = tostring(vim.version().major) .. "." .. tostring(vim.version().minor) }

local function impact_clients(bufnr)
  local found = {}
  local all = vim.lsp.get_clients and vim.lsp.get_clients({ bufnr = bufnr })
    or vim.tbl_values(vim.lsp.buf_get_clients(bufnr))
  for _, client in ipairs(all) do
    if client.name == "impact_ls" then
      table.insert(found, client)
    end
  end
  return found
end

local function request_sync(client, method, params, bufnr)
  if vim.fn.has("nvim-0.11") == 1 then
    return client:request_sync(method, params, 10000, bufnr)
  end
  return client.request_sync(method, params, 10000, bufnr)
end

local function range_params(client)
  local params = vim.lsp.util.make_range_params(0, client.offset_encoding)
  params.context = { diagnostics = {} }
  return params
end

local function wait(ms, condition, what)
  if not vim.wait(ms, condition, 50) then
    error("timed out waiting for " .. what)
  end
end

local function titles(items)
  local out = {}
  for _, item in ipairs(items) do
    local command = item.command
    table.insert(out, type(command) == "table" and command.title or item.title)
  end
  return out
end

local ok, err = pcall(function()
  vim.cmd("edit " .. vim.fn.fnameescape(root .. "/shop/pricing.py"))
  local pricing = vim.api.nvim_get_current_buf()
  wait(30000, function()
    return #impact_clients(pricing) > 0
  end, "the server to attach")
  local client = impact_clients(pricing)[1]
  result.attached = client.name
  result.root_dir = client.root_dir or client.config.root_dir

  local cart = vim.fn.bufadd(root .. "/shop/cart.py")
  local line = vim.api.nvim_buf_get_lines(pricing, 3, 4, false)[1]
  assert(line == "def price(amount, rate):", "unexpected line 4: " .. line)
  vim.api.nvim_buf_set_lines(pricing, 3, 4, false, { "def price(amount, rate, currency):" })

  wait(30000, function() return #vim.diagnostic.get(cart) > 0 end, "diagnostics in cart.py")
  result.cart = {}
  for _, d in ipairs(vim.diagnostic.get(cart)) do
    table.insert(result.cart, {
      lnum = d.lnum, col = d.col, end_col = d.end_col, severity = d.severity,
      source = d.source, code = d.code, message = d.message,
    })
  end

  wait(30000, function() return #vim.lsp.codelens.get(pricing) >= 3 end, "code lenses")
  result.lenses = titles(vim.lsp.codelens.get(pricing))

  vim.api.nvim_win_set_cursor(0, { 4, 6 })
  local response = request_sync(client, "textDocument/codeAction", range_params(client), pricing)
  result.actions = titles(response and response.result or {})

  -- the README's "next edit" mapping, typed: the server answers with window/showDocument
  -- (Neovim 0.11) or the config's client-side impact.openLocation opens it (0.7)
  local next_edit_keys = (vim.g.mapleader or "\\") .. "in"
  vim.api.nvim_feedkeys(next_edit_keys, "mx", false)
  wait(10000, function()
    return vim.api.nvim_buf_get_name(0):match("shop/cart%.py$") ~= nil
  end, "the next edit to open cart.py")
  result.next_edit = {
    file = vim.api.nvim_buf_get_name(0):sub(#root + 2),
    cursor = vim.api.nvim_win_get_cursor(0),
  }

  -- at that MUST site: the same three actions, and the next edit leads on to invoice.py
  local cart_buf = vim.api.nvim_get_current_buf()
  wait(10000, function() return #impact_clients(cart_buf) > 0 end, "cart.py to attach")
  local at_site = request_sync(client, "textDocument/codeAction", range_params(client), cart_buf)
  result.site_actions = titles(at_site and at_site.result or {})
  vim.api.nvim_feedkeys(next_edit_keys, "mx", false)
  wait(10000, function()
    return vim.api.nvim_buf_get_name(0):match("shop/invoice%.py$") ~= nil
  end, "the next edit to open invoice.py")
  result.second_edit = {
    file = vim.api.nvim_buf_get_name(0):sub(#root + 2),
    cursor = vim.api.nvim_win_get_cursor(0),
  }
end)

if not ok then
  result.error = tostring(err)
end
local file = assert(io.open(vim.env.IMPACT_NVIM_OUT, "w"))
file:write(vim.json.encode(result))
file:close()
vim.cmd("qa!")
