;;; drive_eglot.el --- drive Emacs + eglot, configured by docs/eglot.el, like a user  -*- lexical-binding: t; -*-

;; Opens the planted shop ($IMPACT_EMACS_ROOT), connects eglot with M-x eglot, changes the
;; signature of `price', and writes what the user sees to $IMPACT_EMACS_OUT as JSON: the
;; diagnostics in cart.py, the code actions offered at the edit and at a MUST site, where
;; "Next edit" leads, the blast-radius list and the message of the test run.
;; Batch Emacs never idles, so flymake is started by hand where an idle timer would do it.

(require 'package)
(package-activate-all)
(require 'json)
(load (expand-file-name "docs/eglot.el" (getenv "IMPACT_REPO")) nil t)

(defvar drive-result nil)
(defun drive-vector (value)
  "VALUE with every list a vector, so that `json-encode' writes arrays."
  (if (consp value) (vconcat (mapcar #'drive-vector value)) value))
(defun drive-put (key value) (push (cons key (drive-vector value)) drive-result))

(defun drive-wait (what condition &optional seconds)
  "Pump events until CONDITION holds, or fail naming WHAT."
  (let ((deadline (+ (float-time) (or seconds 60))))
    (while (not (funcall condition))
      (when (> (float-time) deadline)
        (error "timed out waiting for %s" what))
      (accept-process-output nil 0.05))))

(defun drive-impact-diagnostics ()
  "The buffer's diagnostics: impact-ls is its only server, so every eglot one is ours."
  (flymake-start)
  (flymake-diagnostics))

(defun drive-actions-at (buffer line column choose)
  "Run M-x eglot-code-actions at LINE (1-based) and COLUMN of BUFFER.
Record the titles offered and pick the one starting with CHOOSE."
  (let (offered)
    (with-current-buffer buffer
      (goto-char (point-min))
      (forward-line (1- line))
      (forward-char column)
      (cl-letf (((symbol-function 'completing-read)
                 (lambda (_prompt collection &rest _)
                   (setq offered (mapcar #'car collection))
                   (seq-find (lambda (title) (string-prefix-p choose title)) offered))))
        ;; a keyboard event, as when the user typed the command: the menu is a minibuffer one
        (let ((last-nonmenu-event ?\r))
          (call-interactively #'eglot-code-actions))))
    offered))

(defun drive-shown ()
  "The file the user looks at: the selected window's buffer."
  (or (buffer-file-name (window-buffer (selected-window))) ""))

(defun drive-where ()
  "The shown file, root-relative, with the 1-based line and the column of its point."
  (with-current-buffer (window-buffer (selected-window))
    (goto-char (window-point (selected-window)))
    (list (file-relative-name buffer-file-name (getenv "IMPACT_EMACS_ROOT"))
          (line-number-at-pos) (current-column))))

(condition-case err
    (let* ((root (file-name-as-directory (getenv "IMPACT_EMACS_ROOT")))
           (pricing (find-file (expand-file-name "shop/pricing.py" root))))
      (call-interactively #'eglot)
      (drive-wait "eglot to connect"
                  (lambda () (let ((server (eglot-current-server)))
                               (and server (eglot--capabilities server)))))
      (drive-put 'server (plist-get (eglot--server-info (eglot-current-server)) :name))
      (let ((cart (find-file-noselect (expand-file-name "shop/cart.py" root))))
        (with-current-buffer pricing
          (goto-char (point-min))
          (search-forward "def price(amount, rate)")
          (backward-char 1)
          (insert ", currency")
          (eglot--signal-textDocument/didChange))
        (drive-wait "warnings in cart.py"
                    (lambda () (with-current-buffer cart (drive-impact-diagnostics))))
        (with-current-buffer cart
          (drive-put 'cart
                     (mapcar (lambda (d)
                               (list (line-number-at-pos (flymake-diagnostic-beg d))
                                     (save-excursion (goto-char (flymake-diagnostic-beg d))
                                                     (current-column))
                                     (format "%s" (flymake-diagnostic-type d))
                                     (flymake-diagnostic-text d)))
                             (drive-impact-diagnostics))))
        ;; at the edit: the three actions; "Next edit" opens the first MUST site
        (drive-put 'edit_actions (drive-actions-at pricing 4 6 "Next edit"))
        (drive-wait "the next edit to open cart.py"
                    (lambda () (string-suffix-p "cart.py" (drive-shown))))
        (drive-put 'next_edit (drive-where))
        ;; at that MUST site: the same three; "Next edit" leads on to invoice.py
        (drive-put 'site_actions
                   (drive-actions-at (window-buffer (selected-window)) 19 25 "Next edit"))
        (drive-wait "the next edit to open invoice.py"
                    (lambda () (string-suffix-p "invoice.py" (drive-shown))))
        (drive-put 'second_edit (drive-where))
        ;; "Show blast radius" lists the sites in a grep-mode buffer
        (drive-actions-at (window-buffer (selected-window)) 8 14 "Show blast radius")
        (drive-wait "the blast radius buffer"
                    (lambda () (get-buffer "*impact-ls blast radius*")))
        (with-current-buffer "*impact-ls blast radius*"
          (drive-put 'blast_radius (split-string (buffer-string) "\n" t))
          (drive-put 'blast_radius_mode (format "%s" major-mode)))
        ;; "Run N affected tests" at the edit: pytest runs, its outcome is a message
        (drive-actions-at pricing 4 6 "Run ")
        (drive-put 'while_running (with-current-buffer "*Messages*"
                                    (car (last (split-string (buffer-string) "\n" t)))))
        (drive-wait "the test run's outcome"
                    (lambda () (with-current-buffer "*Messages*"
                                 (save-excursion (goto-char (point-min))
                                                 (search-forward "Server reports" nil t))))
                    180)
        (with-current-buffer "*Messages*"
          (drive-put 'messages (seq-filter (lambda (l) (string-match-p "impact-ls: " l))
                                           (split-string (buffer-string) "\n" t))))))
  (error (drive-put 'error (error-message-string err))
         (drive-put 'log (with-current-buffer "*Messages*" (buffer-string)))))

(with-temp-file (getenv "IMPACT_EMACS_OUT")
  (insert (json-encode drive-result)))
(kill-emacs 0)
