-- impact-ls for Neovim 0.9 and 0.10 (vim.lsp.start from a FileType autocommand).
-- Set vim.g.impact_ls_cmd to start the server some other way, e.g.
--   vim.g.impact_ls_cmd = { "/path/to/venv/bin/python", "-m", "impact_ls", "serve" }

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
  map("<leader>iB", function() exec("impact.showBlastRadius", {}) end, "blast radius of the workspace")
  map("<leader>it", function() exec("impact.runAffectedTests", { { uri = vim.uri_from_bufnr(bufnr) } }) end,
    "run the affected tests")
  map("<leader>ir", function() exec("impact.reindex", {}) end, "re-index the workspace")
  map("<leader>il", vim.lsp.codelens.run, "run the lens on this line")
  map("<leader>in", function()
    vim.lsp.buf.code_action({
      apply = true,
      filter = function(action) return action.title:match("^Next edit") ~= nil end,
    })
  end, "go to the next edit")
end

vim.lsp.commands["impact.showLocations"] = function(command)
  local items = vim.lsp.util.locations_to_items(command.arguments[3] or {}, "utf-16")
  vim.fn.setqflist({}, " ", { title = command.title, items = items })
  vim.cmd("botright copen")
end

vim.api.nvim_create_autocmd("FileType", {
  pattern = "python",
  callback = function(args)
    local marker = vim.fs.find({ "pyproject.toml", "setup.cfg", "setup.py", ".git" }, {
      upward = true,
      path = vim.fs.dirname(vim.api.nvim_buf_get_name(args.buf)),
    })[1]
    vim.lsp.start({
      name = "impact_ls",
      cmd = vim.g.impact_ls_cmd or { "impact-ls", "serve" },
      root_dir = marker and vim.fs.dirname(marker) or vim.fn.getcwd(),
      init_options = { impactLs = { maySeverity = "information" } },
      on_attach = on_attach,
    }, { bufnr = args.buf })
  end,
})
