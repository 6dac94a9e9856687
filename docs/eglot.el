;;; eglot.el --- impact-ls for Emacs with eglot  -*- lexical-binding: t; -*-

;; Emacs 29 and later ship eglot; on Emacs 28 install it (M-x package-install RET eglot, or
;; Debian's elpa-eglot). Put this in your init file. eglot runs one server per major mode, so
;; this entry takes the place of your usual Python server in `python-mode' buffers.
;; Then M-x eglot in a Python buffer (or add `eglot-ensure' to `python-mode-hook').

(require 'eglot)
(require 'cl-lib)
(require 'grep)

(add-to-list 'eglot-server-programs
             '((python-mode python-ts-mode)
               . ("impact-ls" "serve"
                  :initializationOptions (:impactLs (:maySeverity "information")))))

;; Later changes are sent with workspace/didChangeConfiguration.
(setq-default eglot-workspace-configuration '(:impactLs (:maySeverity "information")))

;; eglot has no code lenses: everything comes through M-x eglot-code-actions at the edit or at
;; a MUST-INSPECT site ("Next edit: …", "Show blast radius", "Run N affected tests").

(cl-defmethod eglot-execute-command (_server (_cmd (eql impact.openLocation)) arguments)
  "Open the site of a \"Next edit\" action (eglot before 1.15 has no window/showDocument)."
  (let* ((location (aref arguments 0))
         (start (plist-get (plist-get location :range) :start)))
    (find-file (eglot--uri-to-path (plist-get location :uri)))
    (goto-char (point-min))
    (forward-line (plist-get start :line))
    (forward-char (plist-get start :character))))

(cl-defmethod eglot-execute-command (server (_cmd (eql impact.runAffectedTests)) arguments)
  "Run the affected tests in the background; the server says how they went when they are done.
pytest may run longer than eglot waits for an answer, and Emacs stays usable meanwhile."
  (jsonrpc-async-request
   server :workspace/executeCommand
   `(:command "impact.runAffectedTests" :arguments ,arguments)
   :success-fn #'ignore
   :error-fn (lambda (error) (message "impact-ls: %s" (plist-get error :message)))
   :timeout nil)
  (message "impact-ls: running the affected tests…"))

(cl-defmethod eglot-execute-command (_server (_cmd (eql impact.showBlastRadius)) _arguments)
  "Show the blast radius as a list of sites that RET or a click opens."
  (let ((report (cl-call-next-method))
        (root (project-root (project-current))))
    (with-current-buffer (get-buffer-create "*impact-ls blast radius*")
      (let ((inhibit-read-only t))
        (erase-buffer)
        (insert (format "Blast radius against %s\n\n" (plist-get report :base)))
        (dolist (bucket '((:must_inspect . "MUST-INSPECT") (:may_impact . "MAY-IMPACT")))
          (seq-doseq (entry (plist-get (plist-get report :triage) (car bucket)))
            (let ((range (aref (plist-get entry :range) 0))
                  (breaks (plist-get entry :breaks)))
              (insert (format "%s:%d:%d: %s %s: %s\n"
                              (plist-get entry :file) (aref range 0) (1+ (aref range 1))
                              (cdr bucket) (plist-get entry :entity)
                              (if (> (length breaks) 0)
                                  (mapconcat (lambda (b) (plist-get b :detail)) breaks "; ")
                                (plist-get entry :reason))))))))
      (setq default-directory (file-name-as-directory root))
      (grep-mode)
      (display-buffer (current-buffer)))
    report))

;;; eglot.el ends here
