-- Drives a headless Neovim configured by docs/neovim*.lua against impact-ls and writes what the
-- user would see to $IMPACT_NVIM_OUT as JSON: diagnostics in another buffer, lenses, actions.
local root = vim.env.IMPACT_NVIM_ROOT
local result = {}

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
  vim.cmd.edit(root .. "/shop/pricing.py")
  local pricing = vim.api.nvim_get_current_buf()
  wait(30000, function()
    return #vim.lsp.get_clients({ bufnr = pricing, name = "impact_ls" }) > 0
  end, "the server to attach")
  local client = vim.lsp.get_clients({ bufnr = pricing, name = "impact_ls" })[1]
  result.attached = client.name
  result.root_dir = client.root_dir

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
  local params = vim.lsp.util.make_range_params(0, client.offset_encoding)
  params.context = { diagnostics = {} }
  local response = client:request_sync("textDocument/codeAction", params, 10000, pricing)
  result.actions = titles(response and response.result or {})

  -- the README's "next edit" mapping: the server answers with window/showDocument
  local mapping = vim.fn.maparg(vim.g.mapleader and "<leader>in" or "\\in", "n", false, true)
  mapping.callback()
  wait(10000, function()
    return vim.api.nvim_buf_get_name(0):match("shop/cart%.py$") ~= nil
  end, "the next edit to open cart.py")
  result.next_edit = {
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
