-- impact-ls for Neovim 0.7 and 0.8 (Debian 12 ships 0.7.2): vim.lsp.start_client from a
-- FileType autocommand, one client per project root. Neovim 0.9 and later: neovim-0.10.lua or
-- neovim.lua. Set vim.g.impact_ls_cmd to start the server some other way, e.g.
--   vim.g.impact_ls_cmd = { "/path/to/venv/bin/python", "-m", "impact_ls", "serve" }

local markers = { "pyproject.toml", "setup.cfg", "setup.py", ".git" }

local function root_of(file)
  local dir = vim.fn.fnamemodify(file, ":p:h")
  while true do
    for _, marker in ipairs(markers) do
      if vim.loop.fs_stat(dir .. "/" .. marker) then
        return dir
      end
    end
    local parent = vim.fn.fnamemodify(dir, ":h")
    if parent == dir then
      return vim.fn.getcwd()
    end
    dir = parent
  end
end

-- These Neovims have no window/showDocument: the "Next edit" action opens its site here.
vim.lsp.commands["impact.openLocation"] = function(command)
  vim.lsp.util.jump_to_location(command.arguments[1], "utf-16")
end

vim.lsp.commands["impact.showLocations"] = function(command)
  local items = vim.lsp.util.locations_to_items(command.arguments[3] or {}, "utf-16")
  vim.fn.setqflist({}, " ", { title = command.title, items = items })
  vim.cmd("botright copen")
end

-- Run the code action whose title starts with `prefix` (0.7 has no code_action filter).
local function run_action(prefix)
  local params = vim.lsp.util.make_range_params()
  params.context = { diagnostics = vim.lsp.diagnostic.get_line_diagnostics() }
  vim.lsp.buf_request(0, "textDocument/codeAction", params, function(err, actions, ctx)
    for _, action in ipairs(err == nil and actions or {}) do
      if action.title:sub(1, #prefix) == prefix then
        local command = action.command
        local client = vim.lsp.get_client_by_id(ctx.client_id)
        if vim.lsp.commands[command.command] then
          vim.lsp.commands[command.command](command, ctx)
        elseif client then
          client.request("workspace/executeCommand", command, function() end, ctx.bufnr)
        end
        return
      end
    end
    vim.notify("impact-ls: no '" .. prefix .. "' action here", vim.log.levels.INFO)
  end)
end

local function on_attach(client, bufnr)
  local group = vim.api.nvim_create_augroup("impact_ls_lenses_" .. bufnr, { clear = true })
  vim.api.nvim_create_autocmd({ "BufEnter", "InsertLeave", "DiagnosticChanged" }, {
    group = group,
    buffer = bufnr,
    callback = function()
      vim.lsp.codelens.refresh()
    end,
  })
  vim.lsp.codelens.refresh()

  local function map(lhs, rhs, desc)
    vim.keymap.set("n", lhs, rhs, { buffer = bufnr, desc = "impact-ls: " .. desc })
  end
  local function exec(command, arguments)
    client.request("workspace/executeCommand", { command = command, arguments = arguments },
      function() end, bufnr)
  end
  map("<leader>in", function() run_action("Next edit") end, "go to the next edit")
  map("<leader>it", function() run_action("Run ") end, "run the affected tests")
  map("<leader>ir", function() exec("impact.reindex", {}) end, "re-index the workspace")
  map("<leader>il", vim.lsp.codelens.run, "run the lens on this line")
end

local clients = {}

vim.api.nvim_create_autocmd("FileType", {
  pattern = "python",
  callback = function(args)
    local root = root_of(vim.api.nvim_buf_get_name(args.buf))
    local id = clients[root]
    if id == nil or vim.lsp.get_client_by_id(id) == nil then
      id = vim.lsp.start_client({
        name = "impact_ls",
        cmd = vim.g.impact_ls_cmd or { "impact-ls", "serve" },
        root_dir = root,
        init_options = { impactLs = { maySeverity = "information" } },
        on_attach = on_attach,
      })
      clients[root] = id
    end
    if id then
      vim.lsp.buf_attach_client(args.buf, id)
    end
  end,
})
