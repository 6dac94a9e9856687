-- Drives a headless Neovim configured by docs/neovim.lua through vim.lsp.buf's call and type
-- hierarchy commands on fixtures/hierarchy_shapes; writes the quickfix lists to $IMPACT_NVIM_OUT.
local root = vim.env.IMPACT_NVIM_ROOT
local result = {}

local function wait(ms, condition, what)
  if not vim.wait(ms, condition, 50) then
    error("timed out waiting for " .. what)
  end
end

-- Run a vim.lsp.buf hierarchy command with the cursor at {line, col} and read the quickfix.
local function quickfix_of(command, line, col)
  vim.fn.setqflist({}, "f")
  vim.api.nvim_win_set_cursor(0, { line, col })
  command()
  wait(15000, function() return #vim.fn.getqflist() > 0 end, "the quickfix list")
  local items = {}
  for _, item in ipairs(vim.fn.getqflist()) do
    table.insert(items, {
      file = vim.api.nvim_buf_get_name(item.bufnr):sub(#root + 2),
      lnum = item.lnum,
      col = item.col,
      text = item.text,
    })
  end
  vim.cmd("cclose")
  return items
end

local ok, err = pcall(function()
  vim.cmd.edit(root .. "/shapes/report.py")
  local report = vim.api.nvim_get_current_buf()
  wait(30000, function()
    return #vim.lsp.get_clients({ bufnr = report, name = "impact_ls" }) > 0
  end, "the server to attach")
  local client = vim.lsp.get_clients({ bufnr = report, name = "impact_ls" })[1]
  wait(30000, function()
    local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
    params.position = { line = 5, character = 6 }
    local response = client:request_sync("textDocument/prepareCallHierarchy", params, 5000, report)
    return response and response.result and #response.result > 0
  end, "the graph to answer")

  result.incoming = quickfix_of(vim.lsp.buf.incoming_calls, 6, 6)  -- def total_area
  result.outgoing = quickfix_of(vim.lsp.buf.outgoing_calls, 11, 6) -- def report

  vim.cmd.edit(root .. "/shapes/square.py")
  result.subtypes = quickfix_of(function() vim.lsp.buf.typehierarchy("subtypes") end, 6, 7)
  result.supertypes = quickfix_of(function() vim.lsp.buf.typehierarchy("supertypes") end, 6, 7)
end)

if not ok then
  result.error = tostring(err)
end
local file = assert(io.open(vim.env.IMPACT_NVIM_OUT, "w"))
file:write(vim.json.encode(result))
file:close()
vim.cmd("qa!")
